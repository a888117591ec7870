import Foundation
import ReceiptCrypto
import StrictJSON

/// Test vectors stored as files beside the tests (see Vectors/real/SOURCES.md for provenance).
enum Vectors {
    static let directory: URL = {
        guard let url = Bundle.module.url(forResource: "Vectors", withExtension: nil) else {
            fatalError("the Vectors resource directory is missing from the test bundle")
        }
        return url
    }()

    static func bytes(_ relativePath: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(relativePath)))
    }

    static func certificate(_ relativePath: String) throws -> Certificate {
        try Certificate(derEncoded: bytes(relativePath))
    }

    static func json(_ relativePath: String) throws -> JSONValue {
        try JSONValue(parsing: bytes(relativePath))
    }
}
