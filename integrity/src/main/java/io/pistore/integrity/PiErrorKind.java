package io.pistore.integrity;

/** The field of a PI tuple that failed its check. */
public enum PiErrorKind {
    GUARD("guard"), APP_TAG("app"), REF_TAG("ref");

    private final String shortName;

    PiErrorKind(String shortName) {
        this.shortName = shortName;
    }

    /** guard, app or ref: the word used in tool output and logs. */
    public String shortName() {
        return shortName;
    }
}
