package io.pistore.integrity;

/** Where an error injection flips a bit. A flipped data bit must surface as a guard error. */
public enum InjectTarget {
    GUARD, APP_TAG, REF_TAG, DATA
}
