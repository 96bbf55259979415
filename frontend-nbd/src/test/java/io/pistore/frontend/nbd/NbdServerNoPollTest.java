package io.pistore.frontend.nbd;

/** Every test of {@link NbdServerTest} with connections that never poll (block for each request). */
class NbdServerNoPollTest extends NbdServerTest {
    @Override
    NbdServer.Options options() {
        return new NbdServer.Options().spinMicros(0);
    }
}
