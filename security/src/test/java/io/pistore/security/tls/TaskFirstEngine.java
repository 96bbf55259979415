package io.pistore.security.tls;

import java.nio.ByteBuffer;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSession;

/**
 * A JDK engine that, once its handshake begins, first asks for a delegated task of its own (as an
 * engine that checks something off the I/O thread may) and says {@code NEED_TASK} until that task
 * has been taken and run; everything else is the wrapped engine's.
 */
final class TaskFirstEngine extends SSLEngine {
    private final SSLEngine e;
    private Runnable pending;
    private boolean ran;

    TaskFirstEngine(SSLEngine e) {
        this.e = e;
    }

    /** Whether the extra task was run. */
    boolean ran() {
        return ran;
    }

    @Override
    public void beginHandshake() throws SSLException {
        e.beginHandshake();
        pending = () -> ran = true;
    }

    @Override
    public SSLEngineResult.HandshakeStatus getHandshakeStatus() {
        return pending != null ? SSLEngineResult.HandshakeStatus.NEED_TASK : e.getHandshakeStatus();
    }

    @Override
    public Runnable getDelegatedTask() {
        Runnable t = pending;
        if (t != null) {
            pending = null;
            return t;
        }
        return e.getDelegatedTask();
    }

    @Override
    public SSLEngineResult wrap(ByteBuffer[] srcs, int offset, int length, ByteBuffer dst) throws SSLException {
        return e.wrap(srcs, offset, length, dst);
    }

    @Override
    public SSLEngineResult unwrap(ByteBuffer src, ByteBuffer[] dsts, int offset, int length) throws SSLException {
        return e.unwrap(src, dsts, offset, length);
    }

    @Override
    public void closeInbound() throws SSLException {
        e.closeInbound();
    }

    @Override
    public boolean isInboundDone() {
        return e.isInboundDone();
    }

    @Override
    public void closeOutbound() {
        e.closeOutbound();
    }

    @Override
    public boolean isOutboundDone() {
        return e.isOutboundDone();
    }

    @Override
    public String[] getSupportedCipherSuites() {
        return e.getSupportedCipherSuites();
    }

    @Override
    public String[] getEnabledCipherSuites() {
        return e.getEnabledCipherSuites();
    }

    @Override
    public void setEnabledCipherSuites(String[] suites) {
        e.setEnabledCipherSuites(suites);
    }

    @Override
    public String[] getSupportedProtocols() {
        return e.getSupportedProtocols();
    }

    @Override
    public String[] getEnabledProtocols() {
        return e.getEnabledProtocols();
    }

    @Override
    public void setEnabledProtocols(String[] protocols) {
        e.setEnabledProtocols(protocols);
    }

    @Override
    public SSLSession getSession() {
        return e.getSession();
    }

    @Override
    public void setUseClientMode(boolean mode) {
        e.setUseClientMode(mode);
    }

    @Override
    public boolean getUseClientMode() {
        return e.getUseClientMode();
    }

    @Override
    public void setNeedClientAuth(boolean need) {
        e.setNeedClientAuth(need);
    }

    @Override
    public boolean getNeedClientAuth() {
        return e.getNeedClientAuth();
    }

    @Override
    public void setWantClientAuth(boolean want) {
        e.setWantClientAuth(want);
    }

    @Override
    public boolean getWantClientAuth() {
        return e.getWantClientAuth();
    }

    @Override
    public void setEnableSessionCreation(boolean flag) {
        e.setEnableSessionCreation(flag);
    }

    @Override
    public boolean getEnableSessionCreation() {
        return e.getEnableSessionCreation();
    }
}
