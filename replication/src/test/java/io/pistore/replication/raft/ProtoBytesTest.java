package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Random;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.junit.jupiter.api.Test;

/** Views of protobuf byte strings that the native PI kernels can take: no copy for one piece. */
class ProtoBytesTest {
    private static byte[] random(int n, long seed) {
        byte[] a = new byte[n];
        new Random(seed).nextBytes(a);
        return a;
    }

    private static byte[] bytesOf(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return a;
    }

    @Test
    void aWrappedArrayIsViewedInPlaceWithItsArrayReachable() {
        byte[] a = random(4096, 1);
        ByteBuffer v = ProtoBytes.view(UnsafeByteOperations.unsafeWrap(a));
        assertTrue(v.hasArray(), "a heap view whose array a native kernel can take");
        assertFalse(v.isReadOnly());
        assertSame(a, v.array(), "not a copy");
        assertArrayEquals(a, bytesOf(v));
    }

    @Test
    void aSubstringIsAViewOfItsPartOfTheArray() {
        byte[] a = random(8192, 2);
        ByteString s = UnsafeByteOperations.unsafeWrap(a).substring(100, 100 + 4096);
        ByteBuffer v = ProtoBytes.view(s);
        assertSame(a, v.array());
        assertEquals(0, v.position());
        assertEquals(4096, v.remaining());
        assertEquals(100, v.arrayOffset());
        assertArrayEquals(s.toByteArray(), bytesOf(v));
    }

    @Test
    void aParsedStringIsViewedWithItsBytes() {
        byte[] a = random(1000, 3);
        ByteString s = ByteString.copyFrom(a); // what parsing a message makes
        ByteBuffer v = ProtoBytes.view(s);
        assertTrue(v.hasArray());
        assertArrayEquals(a, bytesOf(v));
    }

    @Test
    void aRopeIsCopiedWhole() {
        byte[] a = random(300, 4);
        byte[] b = random(500, 5);
        ByteString rope = UnsafeByteOperations.unsafeWrap(a).concat(UnsafeByteOperations.unsafeWrap(b));
        ByteBuffer v = ProtoBytes.view(rope);
        assertEquals(800, v.remaining());
        assertArrayEquals(rope.toByteArray(), bytesOf(v));
        assertTrue(v.hasArray());
    }

    @Test
    void aDirectBufferStaysDirect() {
        byte[] a = random(4096, 6);
        ByteBuffer d = ByteBuffer.allocateDirect(4096).put(a).flip();
        ByteBuffer v = ProtoBytes.view(UnsafeByteOperations.unsafeWrap(d));
        assertTrue(v.isDirect());
        assertArrayEquals(a, bytesOf(v));
    }

    @Test
    void anEmptyStringIsAnEmptyBuffer() {
        assertEquals(0, ProtoBytes.view(ByteString.EMPTY).remaining());
    }

    @Test
    void aDecodedWriteCarriesArrayBackedDataAndMetadata() {
        byte[] d = random(4096, 7);
        byte[] m = random(8, 8);
        ReplicaCommand c = ReplicaCommand.decode(ReplicaCommand.carrying(ReplicaCommand.Op.WRITE, 9, 1,
                io.pistore.integrity.ScatterList.wrap(d), io.pistore.integrity.ScatterList.wrap(m), false).getContent());
        assertTrue(c.data.hasArray() && c.metadata.hasArray(), "so the guards run on the native kernels");
        assertArrayEquals(d, bytesOf(c.data));
        assertArrayEquals(m, bytesOf(c.metadata));
    }
}
