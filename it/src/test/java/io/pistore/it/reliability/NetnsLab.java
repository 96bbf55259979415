package io.pistore.it.reliability;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;

/**
 * Peers on a network of their own: one network namespace per peer ({@code ip netns}), each joined
 * by a veth pair to one bridge in the test's namespace, which holds an address on the same subnet
 * so the test reaches every peer. Cutting a peer off sets its veth's bridge end down: frames to and
 * from it are dropped, as with a pulled cable (open connections hear nothing more; new ones time
 * out or find no host).
 * Names are unique per test JVM and lab ({@code pst-<pid>-<n>-n1}), and {@link #close} removes
 * everything it made, each step on its own, so one failure leaves nothing else behind.
 * Needs root and iproute2 ({@link #assumeAvailable}).
 */
final class NetnsLab implements AutoCloseable {
    private static final AtomicInteger LABS = new AtomicInteger();

    private final String tag;
    private final String subnet;
    private final String bridge;
    private final List<String> namespaces = new ArrayList<>();
    private final List<String> bridgeEnds = new ArrayList<>();
    private final List<String> peerEnds = new ArrayList<>();
    private boolean bridgeMade;

    /** Skips the test (with the reason) when not root or when {@code ip netns} cannot make a namespace. */
    static void assumeAvailable() {
        int uid = uid();
        Assumptions.assumeTrue(uid == 0, "network namespace tests need root (ip netns, veth, bridge); running as uid "
                + uid);
        String probe = "pst-" + ProcessHandle.current().pid() + "-probe";
        String made = run("ip", "netns", "add", probe);
        if (made == null) {
            // entering one needs more than making it (a mount namespace of its own for /sys)
            made = run("ip", "netns", "exec", probe, "ip", "link", "set", "lo", "up");
            run("ip", "netns", "del", probe);
        }
        Assumptions.assumeTrue(made == null, "ip netns unavailable: " + made);
    }

    /** This process's user id: the owner of {@code /proc/self}; -1 when it cannot be told. */
    private static int uid() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | UnsupportedOperationException e) {
            return -1;
        }
    }

    /** A lab for peers 1..{@code count}: namespaces, veths and the bridge, all up. */
    static NetnsLab create(int count) {
        NetnsLab lab = new NetnsLab();
        try {
            lab.build(count);
            return lab;
        } catch (RuntimeException e) {
            lab.close();
            throw e;
        }
    }

    private NetnsLab() {
        long pid = ProcessHandle.current().pid();
        int n = LABS.incrementAndGet();
        // interface names are at most 15 characters: "pst" + pid in base 36 (at most 5) + lab + 2
        this.tag = "pst" + Long.toString(pid, 36) + Integer.toString(n % 36, 36);
        // 198.18.0.0/15 is set aside for network tests (RFC 2544), so it is unlikely to be a network
        // the machine really uses; pid and lab spread concurrent labs over its /24s
        this.subnet = "198." + (18 + (int) (pid / 256 % 2)) + "." + (int) ((pid + n * 97L) % 256);
        this.bridge = tag + "br";
    }

    private void build(int count) {
        must("ip", "link", "add", bridge, "type", "bridge");
        bridgeMade = true;
        must("ip", "addr", "add", subnet + ".254/24", "dev", bridge);
        must("ip", "link", "set", bridge, "up");
        for (int i = 1; i <= count; i++) {
            String ns = "pst-" + ProcessHandle.current().pid() + "-" + tag.substring(tag.length() - 1) + "-n" + i;
            String h = tag + "h" + i;
            String v = tag + "v" + i;
            must("ip", "netns", "add", ns);
            namespaces.add(ns);
            must("ip", "link", "add", h, "type", "veth", "peer", "name", v);
            bridgeEnds.add(h);
            peerEnds.add(v);
            must("ip", "link", "set", v, "netns", ns);
            must("ip", "link", "set", h, "master", bridge, "up");
            must("ip", "-n", ns, "addr", "add", host(i) + "/24", "dev", v);
            must("ip", "-n", ns, "link", "set", v, "up");
            must("ip", "-n", ns, "link", "set", "lo", "up");
        }
    }

    /** Peer {@code i}'s address (1-based). */
    String host(int i) {
        return subnet + "." + i;
    }

    /** The prefix that runs a command in peer {@code i}'s namespace. */
    List<String> exec(int i) {
        return List.of("ip", "netns", "exec", namespaces.get(i - 1));
    }

    /** Cuts peer {@code i} off: its link to the bridge goes down, every frame to or from it is dropped. */
    void cut(int i) {
        must("ip", "link", "set", bridgeEnds.get(i - 1), "down");
    }

    /** Joins peer {@code i} to the bridge again. */
    void heal(int i) {
        must("ip", "link", "set", bridgeEnds.get(i - 1), "up");
    }

    /**
     * What {@link #impair} set: {@code applied} says what (null: nothing), {@code missing} what the
     * machine could not do and why (null: everything asked).
     */
    record Impairment(String applied, String missing) {
    }

    /**
     * Delay and loss on every link, both ways, replacing what an earlier call set: {@code tc netem} on
     * both ends of each veth; where the kernel has no netem, the loss alone, by a random drop of that
     * share of the frames each peer sends and receives on its veth ({@code iptables} with the
     * {@code statistic} match in the peer's namespace; Linux has no delay without netem).
     */
    Impairment impair(int delayMs, double lossPercent) {
        String[] netem = {"netem", "delay", delayMs + "ms", "loss", lossPercent + "%"};
        List<String[]> qdiscs = new ArrayList<>();
        List<String[]> drops = new ArrayList<>();
        String p = Double.toString(lossPercent / 100);
        for (int i = 0; i < namespaces.size(); i++) {
            String ns = namespaces.get(i);
            String v = peerEnds.get(i);
            qdiscs.add(concat(List.of("tc", "qdisc", "replace", "dev", bridgeEnds.get(i), "root"), netem));
            qdiscs.add(concat(List.of("ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", v, "root"), netem));
            for (String[] chain : new String[][] {{"INPUT", "-i"}, {"OUTPUT", "-o"}}) {
                drops.add(new String[] {"ip", "netns", "exec", ns, "iptables", "-A", chain[0], chain[1], v, "-m",
                        "statistic", "--mode", "random", "--probability", p, "-j", "DROP"});
            }
        }
        String why = runAll(qdiscs);
        if (why == null) {
            return new Impairment(delayMs + " ms delay and " + lossPercent + " % loss (tc netem)", null);
        }
        clearImpairment();
        String lossWhy = runAll(drops);
        if (lossWhy != null) {
            clearImpairment();
            return new Impairment(null, "no netem (" + why + "), no iptables loss (" + lossWhy + ")");
        }
        return new Impairment(lossPercent + " % loss (iptables)", "no delay: no netem (" + why + ")");
    }

    /** Runs {@code commands} in order up to the first that fails; null when all ran, else why that one failed. */
    private static String runAll(List<String[]> commands) {
        for (String[] c : commands) {
            String why = run(c);
            if (why != null) {
                return why;
            }
        }
        return null;
    }

    /** Takes off what {@link #impair} set: every link as it was built. */
    void clearImpairment() {
        for (int i = 0; i < namespaces.size(); i++) {
            // what was not set answers an error that changes nothing
            run("tc", "qdisc", "del", "dev", bridgeEnds.get(i), "root");
            run("ip", "netns", "exec", namespaces.get(i), "tc", "qdisc", "del", "dev", peerEnds.get(i), "root");
            run("ip", "netns", "exec", namespaces.get(i), "iptables", "-F", "INPUT");
            run("ip", "netns", "exec", namespaces.get(i), "iptables", "-F", "OUTPUT");
        }
    }

    private static String[] concat(List<String> head, String[] tail) {
        List<String> all = new ArrayList<>(head);
        all.addAll(List.of(tail));
        return all.toArray(new String[0]);
    }

    @Override
    public void close() {
        // Deleting a namespace deletes the veth end inside it and with it the pair; the bridge ends
        // are deleted too in case a namespace could not be.
        for (String ns : namespaces) {
            run("ip", "netns", "del", ns);
        }
        for (String h : bridgeEnds) {
            if (run("ip", "link", "show", h) == null) {
                run("ip", "link", "del", h);
            }
        }
        if (bridgeMade) {
            run("ip", "link", "del", bridge);
        }
    }

    private static void must(String... cmd) {
        String why = run(cmd);
        if (why != null) {
            throw new IllegalStateException(why);
        }
    }

    /** Runs a command; null when it exits 0, else the command and what it printed. */
    private static String run(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return String.join(" ", cmd) + ": did not end within 30 s";
            }
            return p.exitValue() == 0 ? null : String.join(" ", cmd) + " -> exit " + p.exitValue() + ": " + out;
        } catch (IOException e) {
            return String.join(" ", cmd) + ": " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return String.join(" ", cmd) + ": interrupted";
        }
    }
}
