package io.pistore.server.control;

/**
 * Who uses the volumes of a running server, as far as it can tell: what a delete without
 * {@code --force} asks, and how a forced delete ends the connections first.
 */
public interface VolumeUse {
    /** Nothing else uses the volumes: the command has the data directory to itself. */
    VolumeUse NONE = new VolumeUse() {
        @Override
        public String inUse(String volume) {
            return null;
        }

        @Override
        public int disconnect(String volume) {
            return 0;
        }
    };

    /** Why the volume counts as in use (one phrase), or null when it does not. */
    String inUse(String volume);

    /** Ends the client connections bound to the volume; returns how many there were. */
    int disconnect(String volume);

    /** The volume's size changed while served: frontends that describe it to clients learn it. */
    default void changed(String volume) {
    }
}
