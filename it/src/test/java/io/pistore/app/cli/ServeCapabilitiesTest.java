package io.pistore.app.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code serve} reads its transport's capabilities and says where PI is checked: the rdma transport
 * (soft NIC, signature engine on) checks 8-byte tuples with CRC-16 and IP-checksum guards in
 * hardware; tcp checks everything in software and says nothing of hardware.
 */
class ServeCapabilitiesTest {
    @ParameterizedTest
    @CsvSource({"rdma, true", "tcp, false"})
    void serveSaysWhichGuardsItsTransportChecksInHardware(String transport, boolean hardware) throws Exception {
        CountDownLatch stop = new CountDownLatch(1);
        ServeCommand.stopForTests = stop;
        ExecutorService ex = Executors.newSingleThreadExecutor();
        try {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            Future<Integer> f = ex.submit(() -> Main.run(new PrintWriter(out, true), new PrintWriter(err, true),
                    "serve", "--transport", transport, "--listen", "127.0.0.1:0", "--memory-volume", "m1:1MiB"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!out.toString().contains("m1 ") && System.nanoTime() < deadline && !f.isDone()) {
                Thread.sleep(20);
            }
            String o = out.toString();
            assertTrue(o.contains("on " + transport + " "), o + " / " + err);
            assertEquals(hardware, o.contains("checks the PI of 8-byte tuples with guards [CRC16, IP_CHECKSUM] in hardware"),
                    o);
            if (!hardware) {
                assertFalse(o.contains("hardware"), o);
            }
            stop.countDown();
            assertEquals(0, f.get(30, TimeUnit.SECONDS), out + " / " + err);
        } finally {
            ServeCommand.stopForTests = null;
            ex.shutdownNow();
        }
    }
}
