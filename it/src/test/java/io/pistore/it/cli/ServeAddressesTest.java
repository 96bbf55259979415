package io.pistore.it.cli;

import io.pistore.app.cli.Main;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.testkit.Eventually;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Addresses as {@code serve} prints them: one reason when a port is taken, usable NBD URIs on a wildcard. */
class ServeAddressesTest {
    @Test
    void aPortInUseIsReportedOnceInOneLine() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            String at = "127.0.0.1:" + taken.getLocalPort();
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            int code = Main.run(new PrintWriter(out), new PrintWriter(err), "serve", "--transport", "tcp", "--listen", at,
                    "--memory-volume", "m:1MiB");
            assertEquals(2, code, out + " / " + err);
            String e = err.toString().strip();
            assertEquals(1, e.lines().count(), e);
            assertTrue(e.startsWith("pistore serve: cannot listen on " + at + ": "), e);
            assertEquals(e.indexOf("cannot listen"), e.lastIndexOf("cannot listen"), "said once: " + e);
            assertFalse(e.contains("/127.0.0.1"), e);
        }
    }

    @Test
    void nbdOnEveryAddressPrintsUrisAClientCanUse() throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        AtomicInteger code = new AtomicInteger(Integer.MIN_VALUE);
        Thread serve = new Thread(() -> code.set(Main.run(new PrintWriter(out, true), new PrintWriter(err, true),
                "serve", "--nbd", "0.0.0.0:0", "--memory-volume", "m1:1MiB")), "serve-under-test");
        serve.start();
        try {
            Eventually.await("serve to print its volume's URI or end",
                    () -> out.toString().contains("/m1 ") || !serve.isAlive());
            String o = out.toString();
            assertTrue(o.contains("NBD on every address, port "), o + " / " + err);
            assertTrue(o.matches("(?s).*\\n  nbd://127\\.0\\.0\\.1:\\d+/m1 .*"), o);
            assertFalse(o.contains("0:0:0:0") || o.contains("nbd://0.0.0.0"), o);
        } finally {
            serve.interrupt();
            serve.join(TimeUnit.SECONDS.toMillis(30));
        }
        assertEquals(0, code.get(), out + " / " + err);
    }
}
