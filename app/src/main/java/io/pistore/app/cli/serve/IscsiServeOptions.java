package io.pistore.app.cli.serve;

import io.pistore.app.cli.CliException;
import io.pistore.frontend.iscsi.IscsiChapSecrets;
import io.pistore.frontend.iscsi.IscsiServer;
import io.pistore.security.access.AccessRules;
import java.nio.file.Path;
import java.util.function.Consumer;
import picocli.CommandLine.Option;

/**
 * serve's options of the iSCSI frontend beyond its address (docs/ISCSI.md): the CHAP secrets file
 * and the access rules by initiator. Loaded and checked when serve starts, so a bad file stops it
 * with one line.
 */
final class IscsiServeOptions {
    @Option(names = "--iscsi-chap", paramLabel = "FILE",
            description = "With --iscsi: every login must pass CHAP with a name and secret of this file "
                    + "('initiator NAME SECRET' lines, and 'target NAME SECRET' for mutual CHAP; mode 0600; "
                    + "docs/ISCSI.md; config key: iscsi-chap).")
    Path chap;

    @Option(names = "--iscsi-access", paramLabel = "FILE",
            description = "With --iscsi: which targets each initiator may use, read-write or read-only, by its "
                    + "initiator name, its CHAP name or @ADDRESS, in the --access format (default: --access when "
                    + "given; docs/ISCSI.md; config key: iscsi-access).")
    Path access;

    @Option(names = "--iscsi-spin-us", paramLabel = "MICROS", defaultValue = "${sys:pistore.iscsi.spinMicros:-100}",
            description = "Longest an iSCSI connection's thread polls for the initiator's next command before it "
                    + "blocks, when the initiator sends one at a time; adapts to the gaps, yields the CPU, stops when "
                    + "idle; 0: never polls (default: ${DEFAULT-VALUE}, or -Dpistore.iscsi.spinMicros).")
    long spinMicros;

    /** What was loaded, for the start-up line. */
    private String described = "";

    /** The frontend's options; {@code commonAccess} is --access (null without it), which iSCSI uses too. */
    IscsiServer.Options options(boolean serving, Path commonAccess, Consumer<String> log) {
        if (!serving) {
            if (chap != null || access != null) {
                throw CliException.usage((chap != null ? "--iscsi-chap" : "--iscsi-access")
                        + " needs --iscsi: it sets up the iSCSI listener");
            }
            return null;
        }
        if (spinMicros < 0 || spinMicros > IscsiServer.MAX_SPIN_MICROS) {
            throw CliException.usage("--iscsi-spin-us must be 0 to " + IscsiServer.MAX_SPIN_MICROS + ", not " + spinMicros);
        }
        IscsiServer.Options o = new IscsiServer.Options().log(log).spinMicros(spinMicros);
        StringBuilder d = new StringBuilder();
        if (chap != null) {
            try {
                IscsiChapSecrets s = IscsiChapSecrets.read(chap);
                o.chap(s);
                d.append(", CHAP (").append(s).append(')');
            } catch (IllegalArgumentException e) {
                throw CliException.usage("--iscsi-chap: " + e.getMessage());
            }
        }
        if (access != null && commonAccess != null) {
            throw CliException.usage("--access and --iscsi-access name the iSCSI rules twice; give one");
        }
        Path file = access != null ? access : commonAccess;
        if (file != null) {
            try {
                AccessRules rules = AccessRules.read(file);
                o.access(rules);
                d.append(", ").append(rules.size()).append(" access rule(s) from ").append(file);
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            }
        }
        described = d.toString();
        return o;
    }

    /** ", CHAP (FILE, N initiators)" and ", N access rule(s) from FILE" as loaded; empty without them. */
    String described() {
        return described;
    }
}
