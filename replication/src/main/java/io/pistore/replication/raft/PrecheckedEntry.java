package io.pistore.replication.raft;

import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * A log entry's content whose writes this peer already checked as a replica checks them (the guard,
 * the Type 1 reference tag), on their way in: by the transport or the target service as the request's
 * {@link io.pistore.spi.PiDuty} records, or by the replicated volume before sending. It exists only in
 * process: handed to this peer's own Raft server while it leads ({@code LocalLeader.submit}), the
 * leader's check on entry sees it and does not check those writes again; sent through a client, only
 * its bytes travel, and the leader that receives them checks them as any entry.
 */
public final class PrecheckedEntry implements Message {
    private final ByteString content;

    public PrecheckedEntry(ByteString content) {
        this.content = content;
    }

    @Override
    public ByteString getContent() {
        return content;
    }

    @Override
    public String toString() {
        return "prechecked entry of " + content.size() + " bytes";
    }
}
