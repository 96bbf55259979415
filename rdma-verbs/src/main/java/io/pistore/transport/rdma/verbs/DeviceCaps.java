package io.pistore.transport.rdma.verbs;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;

/**
 * Device attributes ({@code struct ib_device_attr} subset): capabilities, queue and SGE limits, and
 * for integrity MRs the page-list limit ({@code max_pi_fast_reg_page_list_len}), the protection
 * types ({@code sig_prot_cap}, 1..3) and guards ({@code sig_guard_cap}) the signature engine handles,
 * and the protection intervals it accepts (mlx5 {@code bs_selector}).
 */
public record DeviceCaps(Set<Capability> capabilities, int maxQpWr, int maxSge, int maxCqe,
                         int maxPiFastRegPageListLen, Set<Integer> sigProtTypes, Set<DifGuard> sigGuards,
                         Set<Integer> sigIntervals) {
    public DeviceCaps {
        capabilities = capabilities.isEmpty() ? Collections.emptySet()
                : Collections.unmodifiableSet(EnumSet.copyOf(capabilities));
        sigProtTypes = Set.copyOf(sigProtTypes);
        sigGuards = sigGuards.isEmpty() ? Collections.emptySet() : Collections.unmodifiableSet(EnumSet.copyOf(sigGuards));
        sigIntervals = Set.copyOf(sigIntervals);
    }

    public boolean has(Capability c) {
        return capabilities.contains(c);
    }
}
