package io.pistore.frontend.iscsi;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.engine.service.TargetService;
import io.pistore.spi.net.ListenAddress;
import io.pistore.spi.net.PolitePoll;
import io.pistore.security.access.AccessRules;
import io.pistore.security.access.ClientIdentity;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.TargetListener;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TransportCapabilities;
import io.pistore.spi.VolumeInfo;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.channels.ServerSocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The iSCSI frontend: a target portal (RFC 7143) that serves every volume of a
 * {@link HostConnection} as its own target, named {@value #IQN_PREFIX}VOLUME, with the volume as
 * logical unit 0. Volumes formatted with 8-byte T10 PI (CRC-16 guard, Types 1-3) show it to the
 * initiator (PROTECT, PROT_EN, P_TYPE) and take and return it with the protect fields of READ,
 * WRITE and VERIFY; the engine checks it and stores nothing that fails. See docs/ISCSI.md.
 *
 * <p>One thread accepts; each connection gets one thread that reads its PDUs. A READ or WRITE that
 * one engine request serves is started on that thread and answered from the request's completion
 * (with the in-process transport it runs there); other commands of every session run on one
 * bounded pool of worker threads ({@link Options#workerThreads}, each blocked on its engine
 * requests). The server never closes the host connection it was given.
 */
public final class IscsiServer implements AutoCloseable {
    /** Longest wait of a PREEMPT AND ABORT for the preempted sessions' running tasks to end. */
    static final int PREEMPT_ABORT_WAIT_SECONDS = 30;
    /**
     * SO_RCVBUF of each connection (the kernel may cap it at net.core.rmem_max and doubles it for its
     * own overhead): room for what an initiator keeps in flight at its usual depth, eight or more
     * writes of 128 KiB. A receive queue that fills closes the window, and on loopback the reader's
     * thread then also runs the initiator's sending, retransmissions included, from its own receives.
     */
    private static final int RECEIVE_BUFFER = 4 << 20;
    /** The IANA port of iSCSI. */
    public static final int DEFAULT_PORT = 3260;
    /** Target names are this prefix and the volume name. */
    public static final String IQN_PREFIX = "iqn.2026-12.io.pistore:";

    /** The longest a connection's thread polls for the next command by default, in microseconds. */
    public static final long DEFAULT_SPIN_MICROS = 100;
    /** The most {@link Options#spinMicros} takes. */
    public static final long MAX_SPIN_MICROS = 10_000;

    /** Limits and logging of a server. */
    public static final class Options {
        long spinNanos = TimeUnit.MICROSECONDS.toNanos(DEFAULT_SPIN_MICROS);
        int maxConnections = 64;
        int workerThreads = 64;
        java.nio.file.Path reservationsDir;
        long maxPendingBytes = 256L << 20;
        long loginTimeoutMillis = 30_000;
        int maxTransferBytes = TransportCapabilities.MAX_TRANSFER_BYTES;
        Consumer<String> log = line -> { };
        String chapUser;
        String chapSecret;
        String chapTargetUser;
        String chapTargetSecret;
        IscsiChapSecrets chapSecrets;
        AccessRules access;

        /**
         * Asks every initiator for CHAP (MD5) with this name and secret (null: no authentication,
         * the default). Secrets of 12 to 255 bytes, as RFC 7143 asks.
         */
        public Options chap(String user, String secret) {
            if (user != null) {
                IscsiChapSecrets.of(user, secret, null, null); // checks the lengths
            }
            this.chapUser = user;
            this.chapSecret = user == null ? null : secret;
            return this;
        }

        /** Mutual CHAP: the name and secret this target proves itself with when the initiator asks. */
        public Options mutualChap(String targetUser, String targetSecret) {
            if (targetSecret != null && !IscsiChapSecrets.validSecret(targetSecret)) {
                throw new IllegalArgumentException("a CHAP secret must be 12 to 255 characters");
            }
            this.chapTargetUser = targetUser;
            this.chapTargetSecret = targetSecret;
            return this;
        }

        /** CHAP for every login with the names and secrets of a secrets file (replaces {@link #chap}). */
        public Options chap(IscsiChapSecrets secrets) {
            this.chapSecrets = secrets;
            return this;
        }

        /**
         * Which targets each initiator may log in to, and whether only to read, by its initiator
         * name, its CHAP name or its address (docs/ISCSI.md); null (the default): every initiator
         * may use every volume.
         */
        public Options access(AccessRules rules) {
            this.access = rules;
            return this;
        }

        /** A fresh CHAP state for one login, or null without CHAP. */
        IscsiChap chap() {
            if (chapSecrets != null) {
                return new IscsiChap(chapSecrets);
            }
            return chapUser == null ? null
                    : new IscsiChap(IscsiChapSecrets.of(chapUser, chapSecret, chapTargetUser, chapTargetSecret));
        }

        /**
         * Most bytes of write data held over every connection for commands whose data is not all
         * in (default 256 MiB); a write beyond it answers TASK SET FULL, and the initiator retries.
         */
        public Options maxPendingBytes(long n) {
            if (n < 1 << 20) {
                throw new IllegalArgumentException("maxPendingBytes must be at least 1 MiB, not " + n);
            }
            this.maxPendingBytes = n;
            return this;
        }

        /** Most initiator connections at once; more are closed at accept (default 64). */
        public Options maxConnections(int n) {
            if (n <= 0) {
                throw new IllegalArgumentException("maxConnections must be positive, not " + n);
            }
            this.maxConnections = n;
            return this;
        }

        /**
         * Threads that run the commands of every session together (default 64): each blocks on its
         * engine requests, so this bounds the commands running at once; more wait their turn.
         */
        public Options workerThreads(int n) {
            if (n <= 0 || n > 4096) {
                throw new IllegalArgumentException("workerThreads must be 1 to 4096, not " + n);
            }
            this.workerThreads = n;
            return this;
        }

        /**
         * Keeps each volume's persistent reservations through a restart in this directory (the data
         * directory) when an initiator asks for it with APTPL; null (the default): APTPL is refused.
         */
        public Options reservationsDirectory(java.nio.file.Path dir) {
            this.reservationsDir = dir;
            return this;
        }

        /**
         * Longest a connection's thread polls for an initiator's next command before it blocks,
         * in microseconds (default {@value IscsiServer#DEFAULT_SPIN_MICROS}; 0: never polls): for
         * initiators that send one command at a time, the poll adapting to the gaps between them
         * (docs/ISCSI.md).
         */
        public Options spinMicros(long micros) {
            if (micros < 0 || micros > MAX_SPIN_MICROS) {
                throw new IllegalArgumentException("spinMicros must be 0 to " + MAX_SPIN_MICROS + ", not " + micros);
            }
            this.spinNanos = TimeUnit.MICROSECONDS.toNanos(micros);
            return this;
        }

        /** Longest wait for each login PDU before the connection is closed (default 30 s). */
        public Options loginTimeoutMillis(long ms) {
            if (ms <= 0 || ms > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("loginTimeoutMillis must be 1 to " + Integer.MAX_VALUE + ", not " + ms);
            }
            this.loginTimeoutMillis = ms;
            return this;
        }

        /** Largest data+PI of one block request of the transport (bounds the block limits page). */
        public Options maxTransferBytes(int n) {
            if (n < 65_536) {
                throw new IllegalArgumentException("maxTransferBytes must be at least 65536, not " + n);
            }
            this.maxTransferBytes = n;
            return this;
        }

        /** Where one line per connection event goes. */
        public Options log(Consumer<String> log) {
            this.log = log;
            return this;
        }
    }

    private final HostConnection connection;
    private final Options options;
    private final ServerSocket listener;
    private final Map<String, ScsiLun> luns = new ConcurrentHashMap<>();
    private final Set<IscsiConnection> connections = ConcurrentHashMap.newKeySet();
    private final java.util.concurrent.atomic.AtomicLong accepted = new java.util.concurrent.atomic.AtomicLong();
    private final AtomicInteger tsih = new AtomicInteger();
    /** Write data held by every connection for commands whose data is not all in. */
    private final AtomicLong pendingWriteBytes = new AtomicLong();
    /** Direct buffers the READs of every session are read into and sent from. */
    private final DataInPool dataIn = new DataInPool();
    private final Thread acceptor;
    /**
     * Where every session's commands run: at most {@link Options#workerThreads} threads for the
     * whole server. A command enabled while all are busy waits in the queue, never refused; the
     * queue is bounded by the sessions' windows ({@value IscsiTaskSet#WINDOW} each).
     */
    private final ThreadPoolExecutor workers;
    /** Looks at the units' port group states every {@value #PORT_GROUPS_TICK_MS} ms ({@link ScsiLun#checkPortGroups}). */
    private final java.util.concurrent.ScheduledExecutorService portGroupWatch;
    static final long PORT_GROUPS_TICK_MS = 100;
    /** What {@link #serveLocal} opened for this server, closed after it (last first). */
    private final List<AutoCloseable> owned = new ArrayList<>();
    private volatile boolean closing;

    private IscsiServer(HostConnection connection, Options options, ServerSocket listener) {
        this.connection = connection;
        this.options = options;
        this.listener = listener;
        this.workers = new ThreadPoolExecutor(options.workerThreads, options.workerThreads, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "pistore-iscsi-task");
                    t.setDaemon(true);
                    return t;
                });
        this.workers.allowCoreThreadTimeOut(true); // an idle server keeps no worker
        this.portGroupWatch = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "pistore-iscsi-port-groups");
            t.setDaemon(true);
            return t;
        });
        this.acceptor = new Thread(this::acceptLoop, "pistore-iscsi-accept");
        this.acceptor.setDaemon(true);
    }

    /**
     * Starts a portal on {@code address} ({@code HOST:PORT}, {@code :PORT}, {@code PORT} or
     * {@code HOST}; host 127.0.0.1 and port 3260 by default; port 0 picks a free one).
     */
    public static IscsiServer start(String address, HostConnection connection, Options options) throws IOException {
        InetSocketAddress a = parseAddress(address);
        // the sockets it accepts have channels: answers leave with gathering writes (PduChannel)
        ServerSocket l = ServerSocketChannel.open().socket();
        try {
            l.setReuseAddress(true);
            l.setReceiveBufferSize(RECEIVE_BUFFER); // before bind: the window scale of the sockets it accepts follows
            l.bind(a, 64);
        } catch (IOException | RuntimeException e) {
            l.close();
            throw e;
        }
        IscsiServer s = new IscsiServer(connection, options, l);
        s.acceptor.start();
        s.portGroupWatch.scheduleWithFixedDelay(s::checkPortGroups, PORT_GROUPS_TICK_MS, PORT_GROUPS_TICK_MS,
                TimeUnit.MILLISECONDS);
        return s;
    }

    /**
     * Starts a portal on {@code address} for the volumes of {@code service}, reached in process
     * through the local transport; closing the server closes that connection too.
     */
    public static IscsiServer serveLocal(String address, TargetService service, Options options) throws IOException {
        BlockTransport t = new LocalTransportProvider().create();
        TargetListener l = null;
        HostConnection h = null;
        try {
            l = t.listen(new LocalTransportProvider().embeddedListenAddress(), service);
            h = t.connect(l.address(), new ConnectOptions(2, 256));
            IscsiServer s = start(address, h, options);
            s.owned.add(t);
            s.owned.add(l);
            s.owned.add(h);
            return s;
        } catch (IOException | RuntimeException e) {
            for (AutoCloseable c : new AutoCloseable[] {h, l, t}) {
                closeQuietly(c);
            }
            throw e;
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception ignored) {
            // closing anyway
        }
    }

    /** {@code HOST:PORT}, {@code :PORT}, {@code PORT} or {@code HOST}; 127.0.0.1 and 3260 by default. */
    public static InetSocketAddress parseAddress(String address) {
        return ListenAddress.parse(address, DEFAULT_PORT, "iSCSI");
    }

    /** The bound address (with the real port when 0 was asked for). */
    public InetSocketAddress address() {
        return (InetSocketAddress) listener.getLocalSocketAddress();
    }

    /** The target name of a volume. */
    public static String targetName(String volume) {
        return IQN_PREFIX + volume;
    }

    /** The target names, one per volume of the host connection. */
    public List<String> targetNames() {
        List<String> names = new ArrayList<>();
        for (VolumeInfo v : connection.volumes()) {
            names.add(targetName(v.name()));
        }
        return names;
    }

    /** The target names {@code who} may log in to: every one without access rules, else those they grant it. */
    List<String> targetNamesFor(ClientIdentity who) {
        List<String> names = new ArrayList<>();
        for (VolumeInfo v : connection.volumes()) {
            if (options.access == null || options.access.grant(who, v.name()) != AccessRules.Grant.NONE) {
                names.add(targetName(v.name()));
            }
        }
        return names;
    }

    /** The logical unit of the target of that name (compared without case, as iSCSI names are), or null. */
    ScsiLun lun(String targetName) {
        String lower = targetName.toLowerCase(Locale.ROOT);
        if (!lower.startsWith(IQN_PREFIX)) {
            return null;
        }
        for (VolumeInfo v : connection.volumes()) {
            if (targetName(v.name()).toLowerCase(Locale.ROOT).equals(lower)) {
                VolumeInfo info = v;
                return luns.compute(v.name(), (k, old) -> old != null && old.pages().sameVolume(info) ? old
                        : new ScsiLun(BlockDevice.open(connection, info.name()), options.maxTransferBytes, old,
                                dataIn, options.reservationsDir, this::log, this::preemptAndAbort,
                                () -> connection.pathGroup(info.name()),
                                peer -> connection.optimizePath(info.name(), peer),
                                (naa, nexus) -> copyUnit(info.name(), naa, nexus)));
            }
        }
        return null;
    }

    /**
     * EXTENDED COPY between units: the unit whose NAA designator is {@code naa}, as the session of
     * initiator port {@code nexus} on {@code fromVolume}'s target reaches it; null when no volume has
     * that designator, that session is gone, or the access rules grant it none of that volume.
     */
    ScsiExtendedCopy.Unit copyUnit(String fromVolume, byte[] naa, String nexus) {
        ClientIdentity who = null;
        for (IscsiConnection c : connections) {
            if (nexus.equals(c.initiatorPort()) && fromVolume.equals(c.volume())) {
                who = c.identity();
            }
        }
        long wanted = Pdu.getLong(naa, 0);
        for (VolumeInfo v : connection.volumes()) {
            if (who == null || ScsiPages.naa(v.name()) != wanted) {
                continue;
            }
            AccessRules.Grant grant = InitiatorAccess.grant(options.access, who, v.name());
            ScsiLun other = grant == AccessRules.Grant.NONE ? null : lun(targetName(v.name()));
            return other == null ? null : other.extendedCopy().asUnit(nexus, other.reservations(),
                    grant == AccessRules.Grant.READ_WRITE && !other.pages().readOnly());
        }
        return null;
    }

    Options options() {
        return options;
    }

    /** The read buffers the units take from; a connection gives each back once its Data-In was sent. */
    DataInPool dataIn() {
        return dataIn;
    }

    /** Where the sessions' commands run. */
    Executor workers() {
        return workers;
    }

    int nextTsih() {
        int t;
        do {
            t = tsih.incrementAndGet() & 0xFFFF;
        } while (t == 0);
        return t;
    }

    /** Takes {@code bytes} of the server's write data budget; false when that would pass it. */
    boolean reservePending(long bytes) {
        while (true) {
            long now = pendingWriteBytes.get();
            if (now + bytes > options.maxPendingBytes) {
                return false;
            }
            if (pendingWriteBytes.compareAndSet(now, now + bytes)) {
                return true;
            }
        }
    }

    void releasePending(long bytes) {
        pendingWriteBytes.addAndGet(-bytes);
    }

    /** Bytes of write data held now for commands whose data is not all in, over every connection. */
    public long pendingWriteBytes() {
        return pendingWriteBytes.get();
    }

    void log(String line) {
        try {
            options.log.accept(line);
        } catch (RuntimeException ignored) {
            // a broken log never breaks the server
        }
    }

    void ended(IscsiConnection c) {
        connections.remove(c);
    }

    /**
     * Session reinstatement (RFC 7143 6.3.5): a login of initiator port {@code port} (initiator name
     * and ISID) to {@code volume}'s target ends the older sessions of that port there, before the new
     * session's I_T nexus begins: each older nexus ends as at a logout (its SPC-2 reservation, unit
     * attentions and copy statuses go), its connection closes and its tasks end unanswered. An
     * initiator does this after a network failure the target did not see; the old connection's own
     * end, whenever it comes, then leaves the new session's nexus alone.
     */
    void reinstate(String port, String volume) {
        for (IscsiConnection old : connections) {
            if (port.equals(old.initiatorPort()) && volume.equals(old.volume())) {
                log("iscsi: " + port + " logged in again to " + targetName(volume)
                        + ": its older session ends (session reinstatement)");
                old.endNexus();
                old.replaced();
            }
        }
    }

    /** Worker threads alive now (at most {@link Options#workerThreads}). */
    public int workerThreadsAlive() {
        return workers.getPoolSize();
    }

    /** How the open connections waited for commands so far (for tests and notes). */
    public PolitePoll.Counts waitCounters() {
        PolitePoll.Counts n = PolitePoll.Counts.NONE;
        for (IscsiConnection c : connections) {
            n = n.plus(c.waits());
        }
        return n;
    }

    /** The smallest receive buffer of the open connections' sockets, or -1 with none open (for tests). */
    int smallestReceiveBuffer() throws java.net.SocketException {
        int least = -1;
        for (IscsiConnection c : connections) {
            int n = c.receiveBufferBytes();
            least = least < 0 ? n : Math.min(least, n);
        }
        return least;
    }

    /** Initiator connections open now. */
    public int connectionsOpen() {
        return connections.size();
    }

    /** Initiator connections accepted since start (not those refused over {@link Options#maxConnections}). */
    public long connectionsAccepted() {
        return accepted.get();
    }

    /**
     * A volume changed while served (a live resize): its logical unit is rebuilt from the volume as
     * it is now, every session on it moves on to the new one, and each of their I_T nexuses gets the
     * unit attention CAPACITY DATA HAS CHANGED. A volume no session uses is picked up at the next login.
     */
    public void volumeChanged(String volume) {
        if (luns.containsKey(volume)) {
            lun(targetName(volume));
        }
    }

    /**
     * A LOGICAL UNIT RESET or TARGET WARM RESET of {@code lun} from {@code from}'s session: the
     * tasks of every other session on the unit are aborted ({@link #abortTasks}), the SPC-2
     * reservation ends, and every I_T nexus on the unit gets the unit attention POWER ON, RESET, OR
     * BUS DEVICE RESET OCCURRED. Persistent reservations stay (SPC-4).
     */
    List<IscsiTask> resetUnit(ScsiLun lun, IscsiConnection from) {
        List<IscsiTask> aborted = abortTasks(lun, from, n -> true);
        lun.reservations().reset();
        lun.attentions().establishAll(ScsiUnitAttentions.RESET);
        log("iscsi: reset of " + targetName(lun.volume()) + ": " + aborted.size() + " task(s) of other sessions aborted");
        return aborted;
    }

    /** A changed path state of a unit with sessions becomes their unit attention (ScsiPortGroups). */
    private void checkPortGroups() {
        for (ScsiLun l : luns.values()) {
            try {
                if (!l.attentions().attached().isEmpty()) {
                    l.checkPortGroups();
                }
            } catch (RuntimeException e) {
                log("iscsi: path states of " + targetName(l.volume()) + " not read: " + e);
            }
        }
    }

    /** Sessions logged in to that volume's target now (each session is one connection). */
    public int sessionsOn(String volume) {
        int n = 0;
        for (IscsiConnection c : connections) {
            if (volume.equals(c.volume())) {
                n++;
            }
        }
        return n;
    }

    /**
     * Aborts the tasks for LUN 0 of every session on {@code lun} but {@code from}'s whose I_T nexus
     * {@code nexuses} accepts; each is answered TASK ABORTED (TAS 1) once it has left its task set.
     * Returns them; their {@code done} completes as they leave.
     */
    List<IscsiTask> abortTasks(ScsiLun lun, IscsiConnection from, java.util.function.Predicate<String> nexuses) {
        return abortTasks(lun, from, nexuses, System.nanoTime());
    }

    /** As above, the tasks whose commands had arrived by {@code receivedBy} ({@link System#nanoTime}). */
    List<IscsiTask> abortTasks(ScsiLun lun, IscsiConnection from, java.util.function.Predicate<String> nexuses,
            long receivedBy) {
        List<IscsiTask> aborted = new ArrayList<>();
        for (IscsiConnection c : connections) {
            String port = c.initiatorPort();
            if (c != from && port != null && lun.volume().equals(c.volume()) && nexuses.test(port)) {
                aborted.addAll(c.abortByOtherNexus(receivedBy));
            }
        }
        return aborted;
    }

    /**
     * PERSISTENT RESERVE OUT PREEMPT AND ABORT removed the registrations of {@code nexuses}: their
     * sessions' tasks on the unit whose commands had arrived by {@code receivedBy} are aborted as
     * {@link #abortTasks} says; with {@code wait} (the PREEMPT came through this port) this returns
     * once they have left (at most {@value #PREEMPT_ABORT_WAIT_SECONDS} s; a log line says when they
     * have not).
     */
    void preemptAndAbort(ScsiLun lun, java.util.Set<String> nexuses, long receivedBy, boolean wait) {
        List<IscsiTask> aborted = abortTasks(lun, null, nexuses::contains, receivedBy);
        try {
            if (wait) {
                java.util.concurrent.CompletableFuture.allOf(aborted.stream().map(t -> t.done)
                        .toArray(java.util.concurrent.CompletableFuture[]::new)).get(PREEMPT_ABORT_WAIT_SECONDS, TimeUnit.SECONDS);
            }
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            log("iscsi: PREEMPT AND ABORT of " + targetName(lun.volume()) + ": aborted tasks still running after "
                    + PREEMPT_ABORT_WAIT_SECONDS + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        log("iscsi: " + (wait ? "PREEMPT AND ABORT" : "PREEMPT AND ABORT or reset through another port") + " of "
                + targetName(lun.volume()) + ": " + aborted.size() + " task(s) of " + nexuses.size() + " I_T nexus(es) aborted");
    }

    /** Ends the connections whose sessions use that volume (before it goes away); returns how many. */
    public int disconnect(String volume) {
        int n = 0;
        for (IscsiConnection c : connections) {
            if (volume.equals(c.volume())) {
                c.shutdown();
                n++;
            }
        }
        luns.remove(volume);
        return n;
    }

    private static void pauseAfterFailedAccept() {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void acceptLoop() {
        boolean failing = false; // one line per run of failed accepts
        while (!closing) {
            Socket s;
            try {
                s = listener.accept();
                failing = false;
            } catch (IOException e) {
                if (closing || listener.isClosed()) {
                    return; // closed under it: no failure to report
                }
                // out of descriptors, say: the portal stays up and tries again after a pause, not in a spin
                if (!failing) {
                    log("iscsi: accept failed (tried again every 100 ms): " + e);
                }
                failing = true;
                pauseAfterFailedAccept();
                continue;
            }
            InetAddress ip = s.getInetAddress();
            String peer = ip.getHostAddress() + ":" + s.getPort();
            if (connections.size() >= options.maxConnections) {
                log("iscsi: " + peer + " refused: " + options.maxConnections + " connections already");
                try {
                    s.close();
                } catch (IOException ignored) {
                    // refused anyway
                }
                continue;
            }
            IscsiConnection c = new IscsiConnection(this, s, peer);
            connections.add(c);
            accepted.incrementAndGet();
            Thread t = new Thread(c, "pistore-iscsi-" + peer);
            t.setDaemon(true);
            t.start();
        }
    }

    /** Stops accepting and ends every connection (a command being executed completes first in the engine). */
    @Override
    public void close() {
        closing = true;
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        for (IscsiConnection c : connections) {
            c.shutdown();
        }
        workers.shutdown();
        portGroupWatch.shutdownNow();
        try {
            acceptor.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (int i = owned.size() - 1; i >= 0; i--) {
            closeQuietly(owned.get(i));
        }
    }
}
