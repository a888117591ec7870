import Foundation

/// Test vectors stored as files in `Vectors/` beside the tests (provenance in `Vectors/SOURCES.md`).
enum TestVectors {
    static func bytes(_ name: String) throws -> [UInt8] {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Vectors") else {
            throw MissingVector(name: name)
        }
        return Array(try Data(contentsOf: url))
    }

    struct MissingVector: Error, CustomStringConvertible {
        let name: String
        var description: String { "test vector Vectors/\(name) is missing from the test bundle" }
    }
}
