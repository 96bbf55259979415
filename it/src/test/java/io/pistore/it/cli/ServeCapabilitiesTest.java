package io.pistore.it.cli;

import io.pistore.app.cli.Main;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.testkit.Eventually;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code serve} reads its transport's capabilities, with its transport options, and says where PI
 * is checked: the rdma transport (soft NIC, signature engine on) checks 8-byte tuples with CRC-16
 * and IP-checksum guards to the NIC (software on the soft NIC); with {@code rdma.pi=cpu} or {@code rdma.soft.integrity=false}
 * it checks everything in software, as tcp does, and says nothing of hardware.
 */
class ServeCapabilitiesTest {
    @ParameterizedTest
    @CsvSource({"rdma, '', true", "tcp, '', false", "rdma, rdma.pi=cpu, false", "rdma, rdma.soft.integrity=false, false",
        "tcp, tcp.ioThreads=1, false"})
    void serveSaysWhichGuardsItsTransportChecksInHardware(String transport, String option, boolean hardware)
            throws Exception {
        List<String> args = new ArrayList<>(List.of("serve", "--transport", transport, "--listen", "127.0.0.1:0",
                "--memory-volume", "m1:1MiB"));
        if (!option.isEmpty()) {
            args.add("--transport-option");
            args.add(option);
        }
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        AtomicInteger code = new AtomicInteger(Integer.MIN_VALUE);
        Thread serve = new Thread(() -> code.set(Main.run(new PrintWriter(out, true), new PrintWriter(err, true),
                args.toArray(new String[0]))), "serve-under-test");
        serve.start();
        try {
            Eventually.await("serve to list its volume or end",
                    () -> out.toString().contains("m1 ") || !serve.isAlive());
            String o = out.toString();
            assertTrue(o.contains("on " + transport + " "), o + " / " + err);
            assertEquals(hardware, o.contains("offloads the PI of 8-byte tuples with guards [CRC16, IP_CHECKSUM] to the "
                    + "NIC's signature engine (on the software NIC, that engine is software too)"), o);
            if (!hardware) {
                assertFalse(o.contains("offloads"), o);
            }
            assertEquals(!option.isEmpty(), o.contains("transport options: " + option), o);
            assertTrue(o.contains("\n  " + io.pistore.integrity.GuardPath.describe() + "\n"),
                    "serve says which guard path PI takes and why: " + o);
        } finally {
            serve.interrupt(); // how a program running serve in a thread stops it
            serve.join(TimeUnit.SECONDS.toMillis(30));
        }
        assertFalse(serve.isAlive(), "serve stops on an interrupt");
        assertEquals(0, code.get(), out + " / " + err);
        assertTrue(out.toString().contains("pistore serve: stopped"), out.toString());
    }
}
