package io.pistore.frontend.iscsi;

import io.pistore.security.access.AccessRules;
import io.pistore.security.access.ClientIdentity;
import java.util.ArrayList;
import java.util.List;

/**
 * Who an initiator is for the access rules (docs/ISCSI.md) and what they grant it. An initiator is
 * known by three names a rule's CLIENT may give: its initiator name ({@code iqn.…} or
 * {@code eui.…}, compared without case, as iSCSI names are), the CHAP name it proved with its
 * secret (compared exactly; only when CHAP is on), and {@code @ADDRESS}, the IP address it
 * connects from, as Java prints it ({@code @127.0.0.1}, {@code @0:0:0:0:0:0:0:1}). The initiator
 * name is what the initiator says it is; only the CHAP name is proven.
 */
final class InitiatorAccess {
    private InitiatorAccess() {
    }

    /** The identity of an initiator; {@code chapName} null without CHAP. */
    static ClientIdentity identity(String initiatorName, String chapName, String address) {
        List<String> exact = new ArrayList<>();
        if (chapName != null) {
            exact.add(chapName);
        }
        exact.add("@" + address);
        return ClientIdentity.of(TextKeys.shorten(initiatorName) + " from " + address + (chapName == null ? "" : " (CHAP " + chapName + ")"),
                List.of(initiatorName), exact);
    }

    /** What the rules grant {@code who} for {@code volume}: everything without rules. */
    static AccessRules.Grant grant(AccessRules rules, ClientIdentity who, String volume) {
        return rules == null ? AccessRules.Grant.READ_WRITE : rules.grant(who, volume);
    }
}
