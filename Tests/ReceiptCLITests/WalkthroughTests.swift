import Foundation
import Testing

/// The README's walkthroughs run as pasted, from the root of the checkout, with `receipt` on the PATH: every `sh`
/// block after the first (the set-up commands CI runs itself) unless the line before it says `<!-- not run: … -->`.
@Suite("The README's walkthroughs", .serialized)
struct WalkthroughTests {
    /// The walkthrough blocks of `readme`, in order.
    static func walkthroughBlocks(_ readme: String) -> [String] {
        var blocks: [String] = []
        var lines = readme.split(separator: "\n", omittingEmptySubsequences: false)[...]
        var previous = ""
        var seenFirst = false
        while let line = lines.popFirst() {
            guard line.hasPrefix("```") else {
                if !line.trimmingCharacters(in: .whitespaces).isEmpty { previous = String(line) }
                continue
            }
            let info = line.dropFirst(3).trimmingCharacters(in: .whitespaces)
            var body: [Substring] = []
            while let next = lines.popFirst(), !next.hasPrefix("```") { body.append(next) }
            if info == "sh" {
                if seenFirst && !previous.hasPrefix("<!-- not run") { blocks.append(body.joined(separator: "\n")) }
                seenFirst = true
            }
            previous = ""
        }
        return blocks
    }

    /// Every file under the checkout but build products and virtual environments: path, size, modification date.
    static func checkoutFiles() -> [String] {
        let root = CLIRunner.packageRoot
        let skipped: Set<String> = [".build", ".venv", ".git", ".swiftpm"]
        guard
            let enumerator = FileManager.default.enumerator(
                at: root, includingPropertiesForKeys: [.fileSizeKey, .contentModificationDateKey])
        else { return [] }
        var files: [String] = []
        for case let url as URL in enumerator {
            if skipped.contains(url.lastPathComponent) {
                enumerator.skipDescendants()
                continue
            }
            let values = try? url.resourceValues(forKeys: [.fileSizeKey, .contentModificationDateKey])
            let relative = String(url.path.dropFirst(root.path.count))
            files.append("\(relative) \(values?.fileSize ?? -1) \(values?.contentModificationDate?.description ?? "")")
        }
        return files.sorted()
    }

    /// Whether something accepts connections on 127.0.0.1:`port`.
    static func isListening(_ port: UInt16) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    @Test("the walkthrough blocks are found: verify, sign, inspect, entitlements, formats, the service")
    func blocksFound() {
        let blocks = Self.walkthroughBlocks(DocumentationTests.readme)
        #expect(blocks.count >= 8)
        #expect(blocks.first?.hasPrefix("export WORK=") == true)
        #expect(blocks.contains { $0.contains("receipt serve --config") })
        #expect(!blocks.contains { $0.contains("receipt bench") || $0.contains("fuzz.sh") })
    }

    @Test("every walkthrough block runs as pasted, in order, and leaves nothing in the checkout")
    func walkthroughsRun() throws {
        #expect(!Self.isListening(8080), "the service walkthrough listens on 127.0.0.1:8080, which is taken")
        let script = "set -euo pipefail\n" + Self.walkthroughBlocks(DocumentationTests.readme).joined(separator: "\n")
        let scratch = try CLIRunner()
        let before = Self.checkoutFiles()
        let process = Process()
        // setsid gives the script its own process group, so that whatever it leaves running is stopped below.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
        process.arguments = ["bash", "-c", script]
        process.currentDirectoryURL = CLIRunner.packageRoot
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = CLIRunner.executable.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "")
        environment["TMPDIR"] = scratch.directory.path
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let group = process.processIdentifier
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            process.waitUntilExit()
            finished.signal()
        }
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        let complaints = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let inTime = finished.wait(timeout: .now() + 180) == .success
        kill(-group, SIGKILL)
        if !inTime { finished.wait() }
        let text = String(decoding: printed, as: UTF8.self)
        #expect(inTime, "the walkthrough did not finish within 180 s")
        #expect(process.terminationStatus == 0, "\(complaints)")
        #expect(text.contains("valid: org.getpure.pure-iphone 15741 [Production]"))
        #expect(text.contains("pro          active   2024-07-01T00:00:00Z          com.example.pro.monthly"))
        #expect(text.contains(#""no_ads":{"state":"active","product_id":"com.example.removeads""#), "\(text)")
        #expect(
            text.contains(
                #""effects":["recorded transaction 2000000000000001","kept renewal info of 2000000000000001"],"duplicate":false}"#
            ), "\(text)")
        #expect(text.contains(#""duplicate":true}"#))
        #expect(
            text.contains(#""entitlements":{"pro":{"state":"active","product_id":"com.example.pro.monthly""#), "\(text)"
        )
        #expect(complaints.contains("CMS Verification successful"))
        #expect(Self.checkoutFiles() == before, "the walkthrough changed files in the checkout")
        #expect(!Self.isListening(8080), "the walkthrough left its server running")
    }

    @Test(
        "each example JSON file is shown in the README exactly as committed",
        arguments: [
            "examples/purchase.json", "examples/catalog.json", "examples/service.json",
        ])
    func examplesShown(path: String) throws {
        let file = try String(contentsOf: CLIRunner.packageRoot.appendingPathComponent(path), encoding: .utf8)
        #expect(DocumentationTests.readme.contains("```json\n" + file + "```\n"), "\(path) differs from the README")
    }
}
