import CReceiptThreadPlacement

/// The table of file descriptors a thread opens files in, which the threads of a process share.
public enum DescriptorTable {
    /// Gives the calling thread a table of its own, a copy of the one it shared (Linux's `unshare(CLONE_FILES)`):
    /// descriptors it opens from then on are its own, invisible to the other threads, and those the table held
    /// (standard output, say) stay open in its copy until it closes them or ends; a descriptor closed on either
    /// side stays open on the other. For a thread that opens and closes many files beside others doing the same:
    /// on a shared table Linux takes the table's lock for every open and close, and counts a reference on the file
    /// for every read, from every CPU at once. Returns false, the table still shared, where the system refuses it
    /// (a sandbox may forbid unshare, as Docker's default seccomp profile does without CAP_SYS_ADMIN).
    @discardableResult
    public static func unshareForCallingThread() -> Bool {
        receipt_thread_unshare_descriptors() == 0
    }
}
