package io.pistore.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The SPI's defaults: providers found through {@link java.util.ServiceLoader} in name order (this
 * module's test resources register two, out of order), an embedded target's default address, and
 * {@link HostQueue#submitMayCompleteOnCaller}'s completion of a future.
 */
class ProviderLookupTest {
    abstract static class Named implements BlockTransportProvider {
        /** The settings the last call was given. */
        TransportOptions seen;

        @Override
        public Availability availability(TransportOptions options) {
            seen = options;
            return Availability.available();
        }

        @Override
        public TransportCapabilities capabilities(TransportOptions options) {
            seen = options;
            return new TransportCapabilities(Set.of(), TransportCapabilities.MAX_TRANSFER_BYTES);
        }

        @Override
        public BlockTransport create(TransportOptions options) {
            seen = options;
            throw new UnsupportedOperationException();
        }
    }

    public static final class Zeta extends Named {
        @Override
        public String name() {
            return "zeta";
        }
    }

    public static final class Alpha extends Named {
        @Override
        public String name() {
            return "alpha";
        }
    }

    @Test
    void providersComeInNameOrder() {
        List<String> names = new ArrayList<>();
        for (BlockTransportProvider p : BlockTransportProvider.all()) {
            names.add(p.name());
        }
        assertEquals(List.of("alpha", "zeta"), names);
        assertEquals("127.0.0.1:0", new Alpha().embeddedListenAddress());
    }

    @Test
    void theCallsWithoutSettingsUseNone() {
        Alpha a = new Alpha();
        assertTrue(a.options().isEmpty(), "a provider declares no settings unless it says so");
        a.seen = null;
        assertTrue(a.availability().isAvailable());
        assertSame(TransportOptions.NONE, a.seen);
        a.seen = null;
        assertEquals(TransportCapabilities.MAX_TRANSFER_BYTES, a.capabilities().maxTransferBytes());
        assertSame(TransportOptions.NONE, a.seen);
        a.seen = null;
        org.junit.jupiter.api.Assertions.assertThrows(UnsupportedOperationException.class, a::create);
        assertSame(TransportOptions.NONE, a.seen);
    }

    /** A provider whose transport does nothing: what create() hands back is checked by identity. */
    static final class Making extends Named {
        final BlockTransport made = new BlockTransport() {
            @Override
            public TargetListener listen(String address, TargetHandler handler) {
                throw new UnsupportedOperationException();
            }

            @Override
            public HostConnection connect(String address, ConnectOptions options) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void close() {
            }
        };

        @Override
        public String name() {
            return "making";
        }

        @Override
        public BlockTransport create(TransportOptions options) {
            seen = options;
            return made;
        }
    }

    @Test
    void createWithoutSettingsHandsBackWhatCreateWithNoneMadeAndListsAreRefusedByDefault() {
        Making m = new Making();
        assertSame(m.made, m.create());
        assertSame(TransportOptions.NONE, m.seen);
        org.junit.jupiter.api.Assertions.assertFalse(m.takesPeerLists(), "one address unless a transport says so");
    }

    /** A queue whose submit returns the future it is given. */
    private static HostQueue queue(CompletableFuture<Completion> f) {
        return new HostQueue() {
            @Override
            public CompletableFuture<Completion> submit(BlockRequest request) {
                return f;
            }

            @Override
            public int depth() {
                return 1;
            }

            @Override
            public int inFlight() {
                return 0;
            }
        };
    }

    @Test
    void theDefaultCallbackPassesTheCompletionOn() {
        List<Completion> got = new ArrayList<>();
        Consumer<Completion> done = got::add;
        CompletableFuture<Completion> f = new CompletableFuture<>();
        queue(f).submitMayCompleteOnCaller(BlockRequest.flush("v"), done);
        assertTrue(got.isEmpty(), "not before the future completes");
        Completion c = Completion.failure(Status.QUEUE_FULL, "full");
        f.complete(c);
        assertEquals(1, got.size());
        assertSame(c, got.get(0));
    }

    @Test
    void theDefaultCallbackTurnsAFailedFutureIntoAnInternalError() {
        List<Completion> got = new ArrayList<>();
        queue(CompletableFuture.failedFuture(new IllegalStateException("boom")))
                .submitMayCompleteOnCaller(BlockRequest.flush("v"), got::add);
        assertEquals(1, got.size());
        assertEquals(Status.INTERNAL_ERROR, got.get(0).status());
        assertEquals("java.lang.IllegalStateException: boom", got.get(0).message());
    }
}
