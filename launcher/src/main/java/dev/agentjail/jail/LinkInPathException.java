package dev.agentjail.jail;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A host-side operation below a trusted root met a symbolic link where it needed a directory or the entry itself (see
 * {@link ProjectFiles}); the message names the link. Nothing was done through it.
 */
public final class LinkInPathException extends IOException {
    private static final long serialVersionUID = 1L;

    private final transient Path link;

    public LinkInPathException(Path link) {
        super(link + " is a symbolic link; agentjail does not follow links there, so nothing was done through it");
        this.link = link;
    }

    /** The absolute path of the link. */
    public Path link() {
        return link;
    }
}
