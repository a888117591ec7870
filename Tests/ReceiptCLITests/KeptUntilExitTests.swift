import Testing

@testable import receipt

/// What a command leaves to the end of the process is never freed before it.
@Suite("Kept until exit")
struct KeptUntilExitTests {
    final class Probe: Sendable {}

    @Test("an object kept until exit outlives the last reference its command held")
    func keptObjectOutlivesItsCommand() {
        weak var watched: Probe?
        do {
            let probe = Probe()
            watched = probe
            KeptUntilExit.keep(probe)
        }
        #expect(watched != nil)
    }
}
