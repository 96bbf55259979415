package io.pistore.integrity;

/** T10 / NVMe protection type. */
public enum PiType {
    /** No protection information. Metadata, if any, is carried but never generated or checked. */
    TYPE_0(0),
    /** Reference tag = initial + block index; app tag 0xFFFF escapes all checks. */
    TYPE_1(1),
    /** As Type 1, with an application-defined initial reference tag. */
    TYPE_2(2),
    /** Reference tag not checked and constant; app tag 0xFFFF with an all-ones ref tag escapes all checks. */
    TYPE_3(3);

    private final int number;

    PiType(int number) {
        this.number = number;
    }

    public int number() {
        return number;
    }

    public boolean isProtected() {
        return this != TYPE_0;
    }

    public static PiType of(int number) {
        switch (number) {
            case 0: return TYPE_0;
            case 1: return TYPE_1;
            case 2: return TYPE_2;
            case 3: return TYPE_3;
            default: throw new IllegalArgumentException("PI type must be 0, 1, 2 or 3, not " + number);
        }
    }
}
