package io.pistore.frontend.iscsi;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiType;
import io.pistore.spi.VolumeInfo;
import java.nio.charset.StandardCharsets;

/**
 * The parameter data a logical unit returns about itself: standard INQUIRY with the PROTECT bit,
 * the VPD pages (supported pages, unit serial number, device identification, Extended INQUIRY with
 * the protection types and checks, block limits, block device characteristics, logical block
 * provisioning), READ CAPACITY(10/16) with the protection fields, the caching and control mode
 * pages and REPORT LUNS. Field positions as SPC-4 and SBC-3 lay them out.
 */
final class ScsiPages {
    static final int[] VPD_PAGES = {0x00, 0x80, 0x83, 0x86, 0x8F, 0xB0, 0xB1, 0xB2};

    private final VolumeInfo info;
    private final int maxTransferBlocks;
    private final long id;
    private final ScsiPortGroups portGroups;

    ScsiPages(VolumeInfo info, int maxTransferBlocks, ScsiPortGroups portGroups) {
        this.info = info;
        this.maxTransferBlocks = maxTransferBlocks;
        this.id = fnv(info.name());
        this.portGroups = portGroups;
    }

    /**
     * Whether initiators see this volume's PI: an 8-byte tuple with the T10 CRC-16 guard (the only
     * PI SCSI carries) and a protected type. Other formats are served with PI inserted and stripped.
     */
    static boolean exposesPi(BlockFormat f) {
        return f.hasPi() && f.metadataSize() == 8 && f.guard() == GuardType.CRC16;
    }

    boolean pi() {
        return exposesPi(info.format());
    }

    PiType type() {
        return info.format().type();
    }

    byte[] standardInquiry() {
        byte[] b = new byte[96];
        b[0] = 0x00; // direct access block device, connected
        b[2] = 0x06; // SPC-4
        b[3] = 0x12; // HISUP, response data format 2
        b[4] = (byte) (b.length - 5);
        b[5] = (byte) (0x30 | (pi() ? 0x01 : 0x00)); // TPGS 11b (implicit and explicit ALUA, ScsiPortGroups), PROTECT
        b[7] = 0x02; // CMDQUE
        ascii(b, 8, 8, "PISTORE");
        ascii(b, 16, 16, info.name());
        ascii(b, 32, 4, "0001");
        // version descriptors: SAM-5, iSCSI, SPC-4, SBC-3
        int[] versions = {0x00A0, 0x0960, 0x0460, 0x04C0};
        for (int i = 0; i < versions.length; i++) {
            b[58 + 2 * i] = (byte) (versions[i] >>> 8);
            b[59 + 2 * i] = (byte) versions[i];
        }
        return b;
    }

    /** The VPD page of that code, or null when this unit has none. */
    byte[] vpd(int page) {
        switch (page) {
            case 0x00: {
                byte[] b = page(0x00, VPD_PAGES.length);
                for (int i = 0; i < VPD_PAGES.length; i++) {
                    b[4 + i] = (byte) VPD_PAGES[i];
                }
                return b;
            }
            case 0x80: {
                String serial = serial();
                byte[] b = page(0x80, serial.length());
                ascii(b, 4, serial.length(), serial);
                return b;
            }
            case 0x83:
                return deviceIdentification();
            case 0x86: {
                byte[] b = page(0x86, 0x3C);
                if (pi()) {
                    int spt = type() == PiType.TYPE_1 ? 0b000 : type() == PiType.TYPE_2 ? 0b010 : 0b100;
                    boolean ref = type() != PiType.TYPE_3;
                    b[4] = (byte) (spt << 3 | 0x04 | 0x02 | (ref ? 0x01 : 0)); // SPT, GRD_CHK, APP_CHK, REF_CHK
                }
                b[5] = 0x07; // HEADSUP, ORDSUP, SIMPSUP
                b[6] = 0x01; // V_SUP
                return b;
            }
            case 0x8F: { // third-party copy: the commands of the unit's own copy manager
                byte[] d = ScsiExtendedCopy.supportedCommandsDescriptor();
                byte[] b = page(0x8F, d.length);
                System.arraycopy(d, 0, b, 4, d.length);
                return b;
            }
            case 0xB0: {
                byte[] b = page(0xB0, 0x3C);
                b[7] = 1; // optimal transfer length granularity: 1 block
                b[4] = 0x01; // WSNZ: WRITE SAME of zero blocks is refused
                b[5] = (byte) ScsiCompareAndWrite.maxBlocks(maxTransferBlocks); // MAXIMUM COMPARE AND WRITE LENGTH
                Pdu.putInt(b, 8, maxTransferBlocks);
                Pdu.putInt(b, 12, maxTransferBlocks);
                Pdu.putInt(b, 20, ScsiProvisioning.MAX_UNMAP_BLOCKS); // maximum unmap LBA count
                Pdu.putInt(b, 24, ScsiProvisioning.MAX_UNMAP_DESCRIPTORS);
                Pdu.putInt(b, 28, 1); // optimal unmap granularity
                Pdu.putLong(b, 36, ScsiProvisioning.maxWriteSameBlocks(maxTransferBlocks));
                // MAXIMUM ATOMIC TRANSFER LENGTH (SBC-4): every write of one engine request is atomic,
                // against a crash (the journal) and against reads (block locks); alignment and
                // granularity 0: none asked for
                Pdu.putInt(b, 44, maxTransferBlocks);
                return b;
            }
            case 0xB1: {
                byte[] b = page(0xB1, 0x3C);
                b[5] = 0x01; // non-rotating medium
                return b;
            }
            case 0xB2: {
                byte[] b = page(0xB2, 4);
                b[5] = (byte) (0x80 | 0x40 | 0x20 | 0x04); // LBPU, LBPWS, LBPWS10, LBPRZ 1
                b[6] = 0x02; // thin provisioned
                return b;
            }
            default:
                return null;
        }
    }

    private byte[] deviceIdentification() {
        byte[] vendorId = ("PISTORE " + info.name()).getBytes(StandardCharsets.US_ASCII);
        int t10Len = Math.min(vendorId.length, 252);
        byte[] ports = portGroups.designators();
        byte[] b = new byte[4 + (4 + 8) + (4 + t10Len) + ports.length];
        b[1] = (byte) 0x83;
        b[2] = (byte) ((b.length - 4) >>> 8);
        b[3] = (byte) (b.length - 4);
        int o = 4;
        byte[] naa = naaDesignator();
        System.arraycopy(naa, 0, b, o, naa.length);
        o += naa.length;
        // T10 vendor identification, ASCII, associated with the logical unit
        b[o] = 0x02;
        b[o + 1] = 0x01;
        b[o + 3] = (byte) t10Len;
        System.arraycopy(vendorId, 0, b, o + 4, t10Len);
        o += 4 + t10Len;
        System.arraycopy(ports, 0, b, o, ports.length); // this port and its target port group
        return b;
    }

    /** NAA locally assigned (type 3), binary, associated with the logical unit: descriptor header and 8 bytes. */
    byte[] naaDesignator() {
        byte[] d = new byte[12];
        d[0] = 0x01;
        d[1] = 0x03;
        d[3] = 8;
        Pdu.putLong(d, 4, naa(info.name()));
        return d;
    }

    /** The NAA designator of the unit of a volume of that name, the same on every server. */
    static long naa(String volume) {
        return 0x3000_0000_0000_0000L | fnv(volume) & 0x0FFF_FFFF_FFFF_FFFFL;
    }

    String serial() {
        return String.format("%016x", id);
    }

    byte[] readCapacity10() {
        byte[] b = new byte[8];
        long last = info.blockCount() - 1;
        Pdu.putInt(b, 0, last > 0xFFFFFFFFL ? -1 : (int) last);
        Pdu.putInt(b, 4, info.format().dataSize());
        return b;
    }

    byte[] readCapacity16() {
        byte[] b = new byte[32];
        Pdu.putLong(b, 0, info.blockCount() - 1);
        Pdu.putInt(b, 8, info.format().dataSize());
        if (pi()) {
            b[12] = (byte) ((type().number() - 1) << 1 | 0x01); // P_TYPE, PROT_EN
        }
        b[13] = 0; // P_I_EXPONENT 0 (one tuple per block), one logical block per physical block
        b[14] = (byte) 0xC0; // LBPME, LBPRZ: deallocated blocks read as zeros
        return b;
    }

    byte[] reportLuns() {
        byte[] b = new byte[16];
        Pdu.putInt(b, 0, 8);
        return b; // LUN 0 only
    }

    /**
     * The mode pages of that code (0x08 caching, 0x0A control, 0x3F all), current and default values
     * (changeable values all zero), or null for a page this unit has not.
     */
    byte[] modePages(int page, int pageControl) {
        boolean changeable = pageControl == 1;
        byte[] caching = new byte[20];
        caching[0] = 0x08;
        caching[1] = 0x12;
        if (!changeable) {
            caching[2] = 0x04; // WCE: a write is durable once SYNCHRONIZE CACHE (or FUA) returns
        }
        byte[] control = new byte[12];
        control[0] = 0x0A;
        control[1] = 0x0A;
        if (!changeable) {
            control[3] = 0x10; // queue algorithm modifier 1: unrestricted reordering
            // ATO: the application tag is the initiator's; TAS: tasks another I_T nexus aborts end with TASK ABORTED
            control[5] = (byte) ((pi() ? 0x80 : 0x00) | 0x40);
            control[8] = (byte) 0xFF; // busy timeout period: unlimited
            control[9] = (byte) 0xFF;
        }
        switch (page) {
            case 0x08: return caching;
            case 0x0A: return control;
            case 0x3F: {
                byte[] b = new byte[caching.length + control.length];
                System.arraycopy(caching, 0, b, 0, caching.length);
                System.arraycopy(control, 0, b, caching.length, control.length);
                return b;
            }
            default: return null;
        }
    }

    /** The 8-byte short LBA mode parameter block descriptor. */
    byte[] blockDescriptor() {
        byte[] b = new byte[8];
        long n = info.blockCount();
        Pdu.putInt(b, 0, n > 0xFFFFFFFFL ? -1 : (int) n);
        Pdu.putInt(b, 4, info.format().dataSize() & 0xFFFFFF);
        return b;
    }

    /** Whether these pages describe that volume as it is now (same name, size, format, access). */
    boolean sameVolume(VolumeInfo v) {
        return info.equals(v);
    }

    boolean readOnly() {
        return info.readOnly();
    }

    private static byte[] page(int code, int length) {
        byte[] b = new byte[4 + length];
        b[1] = (byte) code;
        b[2] = (byte) (length >>> 8);
        b[3] = (byte) length;
        return b;
    }

    private static void ascii(byte[] b, int off, int len, String s) {
        byte[] a = s.getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < len; i++) {
            b[off + i] = i < a.length ? (a[i] < 0x20 || a[i] > 0x7e ? (byte) '_' : a[i]) : (byte) ' ';
        }
    }

    private static long fnv(String s) {
        long h = 0xcbf29ce484222325L;
        for (byte c : s.getBytes(StandardCharsets.UTF_8)) {
            h ^= c & 0xff;
            h *= 0x100000001b3L;
        }
        return h;
    }

    /** MODE SENSE(6) or (10): the header (WP, DPOFUA), the block descriptor unless DBD, the pages asked for. */
    ScsiResult modeSense(byte[] cdb, boolean ten) {
        boolean dbd = (cdb[1] & 0x08) != 0;
        int pc = (cdb[2] & 0xff) >>> 6;
        int page = cdb[2] & 0x3f;
        int sub = cdb[3] & 0xff;
        int alloc = ten ? Cdb.u16(cdb, 7) : cdb[4] & 0xff;
        if (pc == 3) {
            return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x39, 0x00); // saving parameters not supported
        }
        byte[] body = sub == 0 || sub == 0xFF && page == 0x3F ? modePages(page, pc) : null;
        if (body == null) {
            return ScsiResult.invalidField();
        }
        byte[] bd = dbd ? new byte[0] : blockDescriptor();
        int header = ten ? 8 : 4;
        byte[] b = new byte[header + bd.length + body.length];
        int deviceSpecific = (readOnly() ? 0x80 : 0) | 0x10; // WP, DPOFUA
        if (ten) {
            b[0] = (byte) ((b.length - 2) >>> 8);
            b[1] = (byte) (b.length - 2);
            b[3] = (byte) deviceSpecific;
            b[7] = (byte) bd.length;
        } else {
            b[0] = (byte) (b.length - 1);
            b[2] = (byte) deviceSpecific;
            b[3] = (byte) bd.length;
        }
        System.arraycopy(bd, 0, b, header, bd.length);
        System.arraycopy(body, 0, b, header + bd.length, body.length);
        return ScsiResult.cut(b, alloc);
    }
}
