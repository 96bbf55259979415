import java.io.FileInputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.TrustManagerFactory;

/**
 * Where the CPU of TLS goes, on one thread (CPU time, so other work on the machine does not count):
 * the JDK's AES-128-GCM on 16 KiB (one TLS record's worth) with arrays, heap and direct buffers,
 * and SSLEngine wrap/unwrap of 16 KiB records (TLS 1.3, TLS_AES_128_GCM_SHA256) with heap and
 * direct buffers on either side. Prints ns of CPU per KiB and the GB/s that means for one core.
 *
 * <p>Run by tls-cipher-probe.sh: {@code java TlsCipherProbe.java KEYSTORE.p12 SECONDS}.
 */
public class TlsCipherProbe {
    static final int REC = 16384;
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    interface Op {
        void run() throws Exception;
    }

    /** Runs op (REC bytes each) for about {@code seconds} of CPU after a warm-up; ns of CPU per KiB. */
    static double measure(Op op, double seconds) throws Exception {
        long warm = MX.getCurrentThreadCpuTime() + 1_000_000_000L;
        while (MX.getCurrentThreadCpuTime() < warm) {
            for (int i = 0; i < 64; i++) {
                op.run();
            }
        }
        long t0 = MX.getCurrentThreadCpuTime();
        long end = t0 + (long) (seconds * 1e9);
        long n = 0;
        long t;
        do {
            for (int i = 0; i < 64; i++) {
                op.run();
            }
            n += 64;
        } while ((t = MX.getCurrentThreadCpuTime()) < end);
        return (double) (t - t0) / (n * (REC / 1024.0));
    }

    static void report(String name, double nsPerKiB) {
        System.out.printf("%-58s %8.1f ns/KiB  %6.2f GB/s%n", name, nsPerKiB, 1024 / nsPerKiB);
    }

    static ByteBuffer buf(boolean direct, int n) {
        return direct ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n);
    }

    public static void main(String[] args) throws Exception {
        String ks = args[0];
        double seconds = Double.parseDouble(args.length > 1 ? args[1] : "2");
        System.out.println(System.getProperty("java.vm.version") + ", " + Runtime.getRuntime().availableProcessors() + " CPUs");
        cipher(seconds);
        engines(ks, seconds);
    }

    static void cipher(double seconds) throws Exception {
        byte[] key = new byte[16];
        new SecureRandom().nextBytes(key);
        SecretKeySpec k = new SecretKeySpec(key, "AES");
        Cipher enc = Cipher.getInstance("AES/GCM/NoPadding");
        Cipher dec = Cipher.getInstance("AES/GCM/NoPadding");
        byte[] iv = new byte[12];
        long[] ctr = {0};
        byte[] plain = new byte[REC];
        byte[] sealed = new byte[REC + 16];
        byte[] opened = new byte[REC];
        Op encArr = () -> {
            nextIv(iv, ctr);
            enc.init(Cipher.ENCRYPT_MODE, k, new GCMParameterSpec(128, iv));
            enc.updateAAD(iv, 0, 5);
            enc.doFinal(plain, 0, REC, sealed, 0);
        };
        report("Cipher AES-128-GCM encrypt byte[]", measure(encArr, seconds));
        // a fixed ciphertext to decrypt again and again
        nextIv(iv, ctr);
        enc.init(Cipher.ENCRYPT_MODE, k, new GCMParameterSpec(128, iv));
        enc.updateAAD(iv, 0, 5);
        enc.doFinal(plain, 0, REC, sealed, 0);
        byte[] fixedIv = iv.clone();
        Op decArr = () -> {
            dec.init(Cipher.DECRYPT_MODE, k, new GCMParameterSpec(128, fixedIv));
            dec.updateAAD(fixedIv, 0, 5);
            dec.doFinal(sealed, 0, REC + 16, opened, 0);
        };
        report("Cipher AES-128-GCM decrypt byte[]", measure(decArr, seconds));
        for (boolean direct : new boolean[] {false, true}) {
            String kind = direct ? "direct" : "heap";
            ByteBuffer in = buf(direct, REC);
            ByteBuffer out = buf(direct, REC + 16);
            ByteBuffer back = buf(direct, REC);
            Op e = () -> {
                nextIv(iv, ctr);
                enc.init(Cipher.ENCRYPT_MODE, k, new GCMParameterSpec(128, iv));
                in.clear();
                out.clear();
                enc.doFinal(in, out);
            };
            report("Cipher AES-128-GCM encrypt ByteBuffer " + kind, measure(e, seconds));
            in.clear();
            out.clear();
            nextIv(iv, ctr);
            System.arraycopy(iv, 0, fixedIv, 0, iv.length);
            enc.init(Cipher.ENCRYPT_MODE, k, new GCMParameterSpec(128, fixedIv));
            enc.doFinal(in, out);
            Op d = () -> {
                dec.init(Cipher.DECRYPT_MODE, k, new GCMParameterSpec(128, fixedIv));
                out.flip();
                back.clear();
                dec.doFinal(out, back);
                out.limit(out.capacity());
                out.position(out.capacity());
            };
            out.position(out.capacity());
            report("Cipher AES-128-GCM decrypt ByteBuffer " + kind, measure(d, seconds));
        }
    }

    static void nextIv(byte[] iv, long[] ctr) {
        long c = ++ctr[0];
        for (int i = 0; i < 8; i++) {
            iv[11 - i] = (byte) (c >>> (8 * i));
        }
    }

    static SSLContext context(String ks) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (FileInputStream in = new FileInputStream(ks)) {
            store.load(in, "probe1".toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance("PKIX");
        kmf.init(store, "probe1".toCharArray());
        TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
        tmf.init(store);
        SSLContext c = SSLContext.getInstance("TLSv1.3");
        c.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return c;
    }

    static void engines(String ks, double seconds) throws Exception {
        SSLContext c = context(ks);
        for (boolean plainDirect : new boolean[] {false, true}) {
            for (boolean netDirect : new boolean[] {false, true}) {
                SSLEngine client = c.createSSLEngine("localhost", 1);
                client.setUseClientMode(true);
                client.setEnabledProtocols(new String[] {"TLSv1.3"});
                client.setEnabledCipherSuites(new String[] {"TLS_AES_128_GCM_SHA256"});
                SSLEngine server = c.createSSLEngine();
                server.setUseClientMode(false);
                handshake(client, server);
                int packet = client.getSession().getPacketBufferSize();
                ByteBuffer plain = buf(plainDirect, REC);
                ByteBuffer net = buf(netDirect, packet);
                ByteBuffer back = buf(plainDirect, client.getSession().getApplicationBufferSize());
                // wrap and unwrap must pair up (record sequence numbers), so each is timed on its
                // own: the other half runs outside the timed window
                double[] wrapNs = {0};
                double[] unwrapNs = {0};
                long[] recs = {0};
                Op pair = () -> {
                    plain.clear();
                    net.clear();
                    long a = MX.getCurrentThreadCpuTime();
                    check(client.wrap(plain, net));
                    long b = MX.getCurrentThreadCpuTime();
                    net.flip();
                    back.clear();
                    check(server.unwrap(net, back));
                    long d = MX.getCurrentThreadCpuTime();
                    wrapNs[0] += b - a;
                    unwrapNs[0] += d - b;
                    recs[0]++;
                };
                measure(pair, seconds); // warms up and runs
                wrapNs[0] = 0;
                unwrapNs[0] = 0;
                recs[0] = 0;
                measure(pair, seconds);
                String kind = "plain " + (plainDirect ? "direct" : "heap") + ", records " + (netDirect ? "direct" : "heap");
                report("SSLEngine wrap 16 KiB, " + kind, wrapNs[0] / (recs[0] * 16.0));
                report("SSLEngine unwrap 16 KiB, " + kind, unwrapNs[0] / (recs[0] * 16.0));
            }
        }
        // small records: what a 4 KiB request or reply costs when wrapped on its own
        for (int size : new int[] {64, 4096 + 64}) {
            SSLEngine client = c.createSSLEngine("localhost", 1);
            client.setUseClientMode(true);
            SSLEngine server = c.createSSLEngine();
            server.setUseClientMode(false);
            handshake(client, server);
            ByteBuffer plain = ByteBuffer.allocate(size);
            ByteBuffer net = ByteBuffer.allocate(client.getSession().getPacketBufferSize());
            ByteBuffer back = ByteBuffer.allocate(client.getSession().getApplicationBufferSize());
            long t0 = MX.getCurrentThreadCpuTime();
            long n = 0;
            long end = t0 + (long) (seconds * 2e9);
            long t;
            do {
                for (int i = 0; i < 256; i++) {
                    plain.clear();
                    net.clear();
                    check(client.wrap(plain, net));
                    net.flip();
                    back.clear();
                    check(server.unwrap(net, back));
                }
                n += 256;
                if (n == 256 * 64) { // the first part is warm-up
                    t0 = MX.getCurrentThreadCpuTime();
                    n = 0;
                }
            } while ((t = MX.getCurrentThreadCpuTime()) < end || n == 0);
            System.out.printf("%-58s %8.0f ns/record (wrap + unwrap)%n", "SSLEngine " + size + " B record", (double) (t - t0) / n);
        }
    }

    static void check(SSLEngineResult r) {
        if (r.getStatus() != SSLEngineResult.Status.OK) {
            throw new IllegalStateException(r.toString());
        }
    }

    static void handshake(SSLEngine client, SSLEngine server) throws Exception {
        ByteBuffer c2s = ByteBuffer.allocate(1 << 17);
        ByteBuffer s2c = ByteBuffer.allocate(1 << 17);
        ByteBuffer sink = ByteBuffer.allocate(1 << 17);
        client.beginHandshake();
        server.beginHandshake();
        for (int i = 0; i < 1000; i++) {
            step(client, s2c, c2s, sink);
            step(server, c2s, s2c, sink);
            if (done(client) && done(server)) {
                return;
            }
        }
        throw new IllegalStateException("handshake did not finish");
    }

    static boolean done(SSLEngine e) {
        SSLEngineResult.HandshakeStatus s = e.getHandshakeStatus();
        return s == SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING || s == SSLEngineResult.HandshakeStatus.FINISHED;
    }

    static void step(SSLEngine e, ByteBuffer in, ByteBuffer out, ByteBuffer sink) throws Exception {
        Runnable t;
        while ((t = e.getDelegatedTask()) != null) {
            t.run();
        }
        switch (e.getHandshakeStatus()) {
            case NEED_WRAP -> e.wrap(ByteBuffer.allocate(0), out);
            case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
                in.flip();
                sink.clear();
                e.unwrap(in, sink);
                in.compact();
            }
            default -> { }
        }
    }
}
