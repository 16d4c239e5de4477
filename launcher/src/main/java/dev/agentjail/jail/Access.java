package dev.agentjail.jail;

/** Whether a path bound into the jail can be written from inside. */
public enum Access {
    READ_ONLY,
    READ_WRITE
}
