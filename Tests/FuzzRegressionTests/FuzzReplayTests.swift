import Foundation
import FuzzChecks
import Testing

/// Replays inputs through the fuzz targets' checks, so that `swift test` guards what the fuzzers found forever.
@Suite("Fuzz inputs replayed")
struct FuzzReplayTests {
    static let fuzzTesting = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("FuzzTesting")

    struct Input: CustomTestStringConvertible, Sendable {
        let target: String
        let file: URL
        var testDescription: String { "\(target)/\(file.lastPathComponent)" }
    }

    /// Every target's check: those in `FuzzChecks.swift` and those kept in files of their own.
    static let targets = FuzzChecks.targets.merging(FuzzChecks.legacyTargets) { first, _ in first }
        .merging(FuzzChecks.jwsTargets) { first, _ in first }

    /// Every file in `FuzzTesting/<folder>/<target>/`.
    static func inputs(in folder: String) -> [Input] {
        targets.keys.sorted().flatMap { target -> [Input] in
            let directory = fuzzTesting.appendingPathComponent(folder).appendingPathComponent(target)
            let files =
                (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
            return files.sorted { $0.path < $1.path }.map { Input(target: target, file: $0) }
        }
    }

    static func check(_ input: Input) throws -> String? {
        let check = try #require(targets[input.target])
        return check(Array(try Data(contentsOf: input.file)))
    }

    @Test("every input a fuzzer found passes its target's check", arguments: inputs(in: "FailCases"))
    func failCase(_ input: Input) throws {
        #expect(try Self.check(input) == nil)
    }

    @Test("every seed passes its target's check", arguments: inputs(in: "Corpus"))
    func seed(_ input: Input) throws {
        #expect(try Self.check(input) == nil)
    }

    @Test("every target has seeds")
    func everyTargetSeeded() {
        let seeded = Set(Self.inputs(in: "Corpus").map(\.target))
        #expect(seeded == Set(Self.targets.keys))
    }

    @Test("the verify target's anchors load, and our seed receipts verify under them")
    func verifySeedsAreValid() throws {
        let seeds = Self.inputs(in: "Corpus").filter { $0.target == "FuzzVerify" }
        #expect(seeds.count >= 10)
        for seed in seeds {
            #expect(FuzzChecks.verifies(Array(try Data(contentsOf: seed.file))), "\(seed.file.lastPathComponent)")
        }
    }

    @Test("the legacy target's anchors load, and its real receipt seeds verify under them")
    func legacySeedsAreValid() throws {
        let seeds = Self.inputs(in: "Corpus").filter {
            $0.target == "FuzzLegacy" && $0.file.lastPathComponent.hasPrefix("real-")
        }
        #expect(seeds.count >= 8)
        for seed in seeds {
            #expect(
                FuzzChecks.legacyVerifies(Array(try Data(contentsOf: seed.file))), "\(seed.file.lastPathComponent)")
        }
    }

    @Test("the JWS target's anchors load, and its seeds that should verify do")
    func jwsSeedsAreValid() throws {
        let seeds = Self.inputs(in: "Corpus").filter {
            $0.target == "FuzzJWS" && !$0.file.lastPathComponent.hasPrefix("invalid-")
        }
        #expect(seeds.count >= 10)
        for seed in seeds {
            #expect(FuzzChecks.jwsVerifies(Array(try Data(contentsOf: seed.file))), "\(seed.file.lastPathComponent)")
        }
    }

}
