import Foundation
import ReceiptVerifier
import Testing

@Suite("Documentation")
struct DocumentationTests {
    static let readme =
        (try? String(contentsOf: CLIRunner.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""

    @Test(
        "the README's error table lists every error code with its status",
        arguments: ReceiptVerificationError.Code.allCases)
    func errorCodeDocumented(_ code: ReceiptVerificationError.Code) {
        let status = ReceiptVerificationError(code, "").status
        #expect(Self.readme.contains("| `\(code.rawValue)` | \(status) |"))
    }

    @Test("the README starts with the main command and the test command that CI runs")
    func readmeCommands() throws {
        let lines = Self.readme.split(separator: "\n").prefix(6).map(String.init)
        #expect(lines.contains { $0.hasPrefix(".ci/setup && swift run receipt verify ") })
        #expect(lines.contains(".ci/setup --tests && swift test"))
        let ci = try String(contentsOf: CLIRunner.packageRoot.appendingPathComponent(".ci/run"), encoding: .utf8)
        #expect(ci.contains("\n.ci/setup --tests && swift test\n"))
    }
}
