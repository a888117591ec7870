import Glibc
import Testing
import Threads

@Suite("DescriptorTable: a thread's own file descriptors")
struct DescriptorTableTests {
    /// What a thread that unshares its table sees of a descriptor the test opened before.
    private struct Seen: Sendable {
        var unshared = false
        var closedInThread = false
        var openedInThread: Int32 = -1
    }

    @Test("after unsharing, a thread closes the descriptors it inherited in its copy only")
    func closingInTheCopyLeavesTheOriginalOpen() throws {
        let descriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let seen = ThreadResult<Seen> {
            var seen = Seen()
            seen.unshared = DescriptorTable.unshareForCallingThread()
            // On the shared table this would close the test's descriptor, whose number another test may reuse.
            guard seen.unshared else { return seen }
            seen.closedInThread = close(descriptor) == 0
            return seen
        }.value
        #expect(seen.unshared, "unshare(CLONE_FILES) refused: is the process in a sandbox that forbids it?")
        #expect(seen.closedInThread)
        #expect(fcntl(descriptor, F_GETFD) != -1, "the thread closed the test's own descriptor")
    }

    @Test("without unsharing, a thread that closes a descriptor closes it for every thread")
    func closingInASharedTableClosesForAll() throws {
        // Far above what the process has open: a descriptor number the kernel hands out (the lowest free one) could
        // be reused by a test running beside this one between the thread's close and the check.
        let temporary = open("/dev/null", O_RDONLY | O_CLOEXEC)
        try #require(temporary >= 0)
        let descriptor = fcntl(temporary, F_DUPFD_CLOEXEC, 1001)
        close(temporary)
        try #require(descriptor >= 1001)
        let closed = ThreadResult<Bool> { close(descriptor) == 0 }.value
        #expect(closed)
        #expect(fcntl(descriptor, F_GETFD) == -1 && errno == EBADF)
    }

    @Test("a descriptor a thread opens after unsharing is not in the other threads' table")
    func descriptorsOpenedAfterwardsStayWithTheThread() throws {
        let opened = ThreadResult<Seen> {
            var seen = Seen()
            seen.unshared = DescriptorTable.unshareForCallingThread()
            guard seen.unshared else { return seen }
            // Far above what the process has open, so no other test's descriptor has this number.
            let temporary = open("/dev/null", O_RDONLY | O_CLOEXEC)
            seen.openedInThread = temporary >= 0 ? dup2(temporary, 1000) : -1
            close(temporary)
            return seen
        }.value
        #expect(opened.unshared)
        #expect(opened.openedInThread == 1000)
        #expect(fcntl(1000, F_GETFD) == -1 && errno == EBADF)
    }
}
