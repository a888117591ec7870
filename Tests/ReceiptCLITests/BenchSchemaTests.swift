import Foundation
import StrictJSON
import Testing

/// `receipt bench --json` keeps the layout the README documents, so that scripts can read its ratios.
@Suite("The benchmark's JSON")
struct BenchSchemaTests {
    /// The key paths of the README's table, between its markers.
    static func documentedPaths() throws -> Set<String> {
        let readme = try String(
            contentsOf: CLIRunner.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "<!-- bench-json-schema -->"))
        let end = try #require(readme.range(of: "<!-- end bench-json-schema -->"))
        let rows = readme[start.upperBound..<end.lowerBound].split(separator: "\n").filter { $0.hasPrefix("| `") }
        return Set(rows.compactMap { $0.split(separator: "`").dropFirst().first.map(String.init) })
    }

    /// Every leaf of `value` as a dotted path, the figures' algorithm names as `<algorithm>` and a rate (an
    /// object with `per_second`) as one leaf.
    static func paths(of value: JSONValue, at prefix: String = "") -> Set<String> {
        guard case .object(let object) = value, object["per_second"] == nil else { return [prefix] }
        var paths: Set<String> = []
        for member in object.members {
            let key = prefix == "figures" ? "<algorithm>" : member.key
            paths.formUnion(self.paths(of: member.value, at: prefix.isEmpty ? key : prefix + "." + key))
        }
        return paths
    }

    @Test("every key of bench --json is in the README's table and every key of the table is in the output")
    func layoutIsDocumented() throws {
        let runner = try CLIRunner()
        let result = try runner.run(["bench", "--rounds", "1", "--seconds", "0.01", "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        let document = try JSONValue(parsing: result.standardOutput)

        #expect(Self.paths(of: document) == (try Self.documentedPaths()))
        #expect(document["schema_version"] == .integer(1))
        guard case .object(let figures)? = document["figures"] else {
            Issue.record("no figures")
            return
        }
        #expect(figures.keys == ["RSA-2048", "EC P-256"])
    }
}
