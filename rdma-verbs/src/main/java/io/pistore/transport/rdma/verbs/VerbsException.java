package io.pistore.transport.rdma.verbs;

import java.io.IOException;

/**
 * A verb refused synchronously, as a negative errno from {@code ib_post_send} or
 * {@code ib_map_mr_sg_pi} would: {@code errno} names the kind (EINVAL, ENOMEM, EOPNOTSUPP, ...).
 */
public class VerbsException extends IOException {
    public static final int EINVAL = 22;
    public static final int ENOMEM = 12;
    public static final int EOPNOTSUPP = 95;
    public static final int ENOTCONN = 107;
    public static final int ECONNREFUSED = 111;
    public static final int ENODEV = 19;
    public static final int ETIMEDOUT = 110;

    private final int errno;

    public VerbsException(int errno, String message) {
        super(message);
        this.errno = errno;
    }

    public int errno() {
        return errno;
    }
}
