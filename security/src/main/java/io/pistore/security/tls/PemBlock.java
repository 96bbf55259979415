package io.pistore.security.tls;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/** One {@code -----BEGIN TYPE----- ... -----END TYPE-----} block of a PEM file, decoded. */
record PemBlock(String type, byte[] der) {
    private static final String BEGIN = "-----BEGIN ";
    private static final String END = "-----END ";

    /** Every PEM block of a file, in order; text outside the blocks (comments, openssl's "Bag Attributes") is skipped. */
    static List<PemBlock> read(Path file, String what) {
        String text;
        try {
            byte[] bytes = Files.readAllBytes(file);
            text = new String(bytes, StandardCharsets.US_ASCII);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new TlsFileException(what + " " + file + " does not exist");
        } catch (java.nio.file.AccessDeniedException e) {
            throw new TlsFileException(what + " " + file + " is not readable (permission denied)");
        } catch (java.io.IOException e) {
            throw new TlsFileException(what + " " + file + " is not readable: " + e.getMessage());
        }
        List<PemBlock> blocks = new ArrayList<>();
        int at = 0;
        while (true) {
            int begin = text.indexOf(BEGIN, at);
            if (begin < 0) {
                break;
            }
            int typeEnd = text.indexOf("-----", begin + BEGIN.length());
            if (typeEnd < 0) {
                break;
            }
            String type = text.substring(begin + BEGIN.length(), typeEnd);
            String endMarker = END + type + "-----";
            int end = text.indexOf(endMarker, typeEnd);
            if (end < 0) {
                throw new TlsFileException(what + " " + file + ": PEM block " + type + " has no END line");
            }
            String body = text.substring(typeEnd + 5, end);
            if (body.contains(":")) {
                // "Proc-Type: 4,ENCRYPTED" headers: the legacy encrypted key format
                throw new TlsFileException(what + " " + file + " is encrypted; give an unencrypted key "
                        + "(openssl pkey -in KEY -out KEY.plain)");
            }
            byte[] der;
            try {
                der = Base64.getMimeDecoder().decode(body);
            } catch (IllegalArgumentException e) {
                throw new TlsFileException(what + " " + file + ": PEM block " + type + " is not valid base64");
            }
            blocks.add(new PemBlock(type, der));
            at = end + endMarker.length();
        }
        return blocks;
    }
}
