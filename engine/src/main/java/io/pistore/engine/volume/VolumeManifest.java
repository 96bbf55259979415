package io.pistore.engine.volume;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.Properties;

/**
 * A file volume's manifest, {@code NAME.volume} (docs/FORMAT.md): a properties file naming the
 * volume, its format and size, and the layout version of its files. Written whole to a temporary
 * file, forced and renamed over the old one: the commit point of a create and of each step of a resize.
 *
 * @param version  {@link #CURRENT}, {@link #PLAIN_METADATA} or {@link #UNJOURNALED}
 * @param resizeTo the size a resize under way grows to, or -1
 */
record VolumeManifest(int version, String name, BlockFormat format, long blocks, long resizeTo) {
    /** Version 3: the metadata file holds metadata XOR an unwritten block's (a hole where unwritten). */
    static final int CURRENT = 3;
    /** Version 2: the metadata file holds metadata as it is. */
    static final int PLAIN_METADATA = 2;
    /** Version 1: as version 2 without a journal; converted to version 2 on open. */
    static final int UNJOURNALED = 1;
    private static final String RESIZE_KEY = "resize.to";

    /** Whether the metadata file holds metadata XOR an unwritten block's (version 3). */
    boolean xorMetadata() {
        return version >= CURRENT;
    }

    /** This manifest with {@code blocks} and {@code resizeTo} instead. */
    VolumeManifest sized(long blocks, long resizeTo) {
        return new VolumeManifest(version, name, format, blocks, resizeTo);
    }

    /** Reads a manifest; a version other than 1 to 3, a missing key or one that does not parse is refused. */
    static VolumeManifest read(Path manifest) throws IOException {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(manifest)) {
            p.load(in);
        }
        int version = Integer.parseInt(required(p, "version"));
        if (version < UNJOURNALED || version > CURRENT) {
            throw new IOException("manifest version " + version + " is not supported (expected " + UNJOURNALED + " to "
                    + CURRENT + ")");
        }
        BlockFormat format = BlockFormat.of(Integer.parseInt(required(p, "data.size")),
                Integer.parseInt(required(p, "metadata.size")), GuardType.parse(required(p, "guard")),
                PiType.of(Integer.parseInt(required(p, "pi.type"))), PiLocation.parse(required(p, "pi.location")));
        String resizing = p.getProperty(RESIZE_KEY);
        return new VolumeManifest(version, required(p, "name"), format, Long.parseLong(required(p, "blocks")),
                resizing == null ? -1 : Long.parseLong(resizing.trim()));
    }

    private static String required(Properties p, String key) throws IOException {
        String v = p.getProperty(key);
        if (v == null) {
            throw new IOException("manifest has no '" + key + "'");
        }
        return v.trim();
    }

    /** Writes this manifest to {@code manifest}: temporary file, force, rename, directory force. */
    void write(Path manifest) throws IOException {
        Properties p = new Properties();
        if (resizeTo >= 0) {
            p.setProperty(RESIZE_KEY, Long.toString(resizeTo));
        }
        p.setProperty("version", Integer.toString(version));
        p.setProperty("name", name);
        p.setProperty("blocks", Long.toString(blocks));
        p.setProperty("data.size", Integer.toString(format.dataSize()));
        p.setProperty("metadata.size", Integer.toString(format.metadataSize()));
        p.setProperty("guard", format.guard().cliName());
        p.setProperty("pi.type", Integer.toString(format.type().number()));
        p.setProperty("pi.location", format.location().name().toLowerCase(Locale.ROOT));
        Path tmp = manifest.resolveSibling(manifest.getFileName() + ".tmp");
        Files.deleteIfExists(tmp); // a leftover keeps its mode; the new one is private
        try (FileChannel c = PrivateFiles.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            p.store(java.nio.channels.Channels.newOutputStream(c), "pistore volume manifest");
            c.force(true);
        }
        try {
            Files.move(tmp, manifest, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, manifest, StandardCopyOption.REPLACE_EXISTING);
        }
        VolumeStore.syncDirectory(manifest.getParent());
    }
}
