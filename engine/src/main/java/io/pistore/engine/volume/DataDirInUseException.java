package io.pistore.engine.volume;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A data directory could not be opened because another {@link VolumeStore} owns it: one in another
 * process, or one already open in this process. The message names the directory and, when known,
 * the owner's pid and what it is doing, e.g. {@code /srv/data is in use by pid 4242 (pistore serve)}.
 */
public final class DataDirInUseException extends IOException {
    private static final long serialVersionUID = 1L;

    private final Path dir;
    private final long ownerPid;
    private final String owner;

    DataDirInUseException(Path dir, long ownerPid, String owner, boolean thisProcess) {
        super(message(dir, ownerPid, owner, thisProcess));
        this.dir = dir;
        this.ownerPid = ownerPid;
        this.owner = owner;
    }

    private static String message(Path dir, long pid, String owner, boolean thisProcess) {
        String by = pid > 0 ? "pid " + pid + (owner != null ? " (" + owner + ")" : "")
                : thisProcess ? "this process" : "another process";
        return dir + " is in use by " + by + (thisProcess && pid > 0 ? ", a store already open in this process" : "");
    }

    /** The directory that was asked for. */
    public Path dir() {
        return dir;
    }

    /** The owner's process id, or -1 when the lock file does not (yet) name a live process. */
    public long ownerPid() {
        return ownerPid;
    }

    /** What the owner said it is doing (e.g. {@code pistore serve}), or null when unknown. */
    public String owner() {
        return owner;
    }
}
