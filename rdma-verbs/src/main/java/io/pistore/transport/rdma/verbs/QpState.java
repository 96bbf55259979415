package io.pistore.transport.rdma.verbs;

/** The states of a queue pair we model: ready to send, error (work is flushed), destroyed. */
public enum QpState {
    RTS, ERROR, CLOSED
}
