package io.pistore.app.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** {@code bench --plot FILE}: an SVG an XML parser reads, one line per PI mode in each panel. */
class BenchPlotCommandTest {
    @TempDir
    Path dir;

    /** The data-series names of the polylines of one panel. */
    static List<String> series(Document d, String panel) {
        List<String> names = new ArrayList<>();
        NodeList lines = d.getElementsByTagNameNS("http://www.w3.org/2000/svg", "polyline");
        for (int i = 0; i < lines.getLength(); i++) {
            Element e = (Element) lines.item(i);
            if (e.getAttribute("class").equals(panel)) {
                names.add(e.getAttribute("data-series"));
                assertTrue(e.getAttribute("points").split(" ").length >= 2, "a line has points: " + e.getAttribute("points"));
            }
        }
        return names;
    }

    static Document parse(Path svg) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        return f.newDocumentBuilder().parse(svg.toFile());
    }

    @Test
    void twoPiModesOverTwoRoundsAreTwoSeriesInEachPanel() throws Exception {
        Path svg = dir.resolve("bench.svg");
        EngineCommandsTest.Result r = EngineCommandsTest.run("bench", "--pi", "insert,off", "--rounds", "2",
                "--seconds", "2", "--ramp", "0", "--size", "16m", "--qd", "4", "--plot", svg.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("plot: " + svg), r.out());
        assertTrue(r.out().contains("[local pi=off round 2   1s]"), "progress lines name mode and round: " + r.out());
        Document d = parse(svg);
        assertEquals("svg", d.getDocumentElement().getLocalName());
        assertEquals(List.of("local pi=insert", "local pi=off"), series(d, "latency"));
        assertEquals(List.of("local pi=insert", "local pi=off"), series(d, "iops"));
        assertEquals(0, d.getElementsByTagName("script").getLength(), "no script");
        String text = java.nio.file.Files.readString(svg);
        assertTrue(!text.contains("http://") || text.replace("http://www.w3.org/2000/svg", "").indexOf("http") < 0,
                "nothing fetched from a network");
        assertTrue(text.contains(">99.9%<") || text.contains(">99%<"), "the tail axis is labelled in nines");
    }

    @Test
    void oneModeIsOneSeriesNamedByItsTransport() throws Exception {
        Path svg = dir.resolve("one.svg");
        EngineCommandsTest.Result r = EngineCommandsTest.run("bench", "--seconds", "1", "--ramp", "0", "--size", "16m",
                "--qd", "4", "--json", "--plot", svg.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("plot: " + svg), "with --json the note goes to stderr: " + r.err());
        assertEquals(List.of("local"), series(parse(svg), "latency"));
    }

    @Test
    void aPlotIntoAMissingDirectoryIsRefusedBeforeRunning() {
        Path svg = dir.resolve("nosuch").resolve("x.svg");
        EngineCommandsTest.Result r = EngineCommandsTest.run("bench", "--seconds", "1", "--plot", svg.toString());
        assertEquals(ExitCodes.USAGE, r.code());
        assertTrue(r.err().contains("--plot " + svg + ": no directory"), r.err());
        assertTrue(!r.out().contains("iops="), "nothing ran: " + r.out());
    }
}
