package io.pistore.transport.rdma.verbs;

/** MR access flags ({@code enum ib_access_flags} subset). */
public final class Access {
    public static final int LOCAL_WRITE = 1;
    public static final int REMOTE_WRITE = 1 << 1;
    public static final int REMOTE_READ = 1 << 2;

    private Access() {
    }
}
