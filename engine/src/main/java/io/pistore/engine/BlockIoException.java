package io.pistore.engine;

import io.pistore.spi.Completion;

/** A failed block request, carrying its completion (status, PI detail, message). */
public final class BlockIoException extends java.io.IOException {
    private final transient Completion completion;

    public BlockIoException(Completion completion) {
        super(completion.toString());
        this.completion = completion;
    }

    public Completion completion() {
        return completion;
    }
}
