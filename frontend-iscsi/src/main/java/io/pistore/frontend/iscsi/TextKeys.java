package io.pistore.frontend.iscsi;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Text key=value pairs as login and text PDUs carry them (RFC 7143 section 6.1): UTF-8, each pair
 * ended by a NUL byte, in order.
 */
final class TextKeys {
    /** Longest key and value this side accepts, as the RFC bounds them. */
    static final int MAX_KEY = 63;
    static final int MAX_VALUE = 8192;

    private TextKeys() {
    }

    /** The pairs of a data segment, in order; a pair without '=' or too long fails with a message. */
    static Map<String, String> parse(byte[] data) throws IscsiProtocolException {
        Map<String, String> keys = new LinkedHashMap<>();
        int start = 0;
        for (int i = 0; i <= data.length; i++) {
            if (i == data.length || data[i] == 0) {
                if (i > start) {
                    String pair = new String(data, start, i - start, StandardCharsets.UTF_8);
                    int eq = pair.indexOf('=');
                    if (eq <= 0) {
                        throw new IscsiProtocolException("text pair without a key and '=': " + shorten(pair));
                    }
                    String k = pair.substring(0, eq);
                    String v = pair.substring(eq + 1);
                    if (k.length() > MAX_KEY || v.length() > MAX_VALUE) {
                        throw new IscsiProtocolException("text key or value too long: " + shorten(k));
                    }
                    if (keys.containsKey(k)) {
                        throw new IscsiProtocolException("text key given twice: " + shorten(k));
                    }
                    keys.put(k, v);
                }
                start = i + 1;
            }
        }
        return keys;
    }

    /** The data segment of these pairs. */
    static byte[] format(Map<String, String> keys) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (Map.Entry<String, String> e : keys.entrySet()) {
            byte[] pair = (e.getKey() + "=" + e.getValue()).getBytes(StandardCharsets.UTF_8);
            b.write(pair, 0, pair.length);
            b.write(0);
        }
        return b.toByteArray();
    }

    static String shorten(String s) {
        String t = s.length() > 64 ? s.substring(0, 64) + "..." : s;
        StringBuilder b = new StringBuilder();
        for (char c : t.toCharArray()) {
            b.append(c < 0x20 || c > 0x7e ? '?' : c);
        }
        return b.toString();
    }

    /**
     * {@code first} then {@code rest}, cut after the last whole NUL-ended key=value that fits in
     * {@code max} bytes: a text answer never longer than the initiator takes.
     */
    static byte[] joinBounded(byte[] first, byte[] rest, int max) {
        byte[] all = new byte[first.length + rest.length];
        System.arraycopy(first, 0, all, 0, first.length);
        System.arraycopy(rest, 0, all, first.length, rest.length);
        if (all.length <= max) {
            return all;
        }
        int end = max;
        while (end > 0 && all[end - 1] != 0) {
            end--;
        }
        return java.util.Arrays.copyOf(all, end);
    }
}
