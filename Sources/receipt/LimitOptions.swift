import ReceiptVerifier

/// The `--max-…` options that change ``VerificationLimits``.
enum LimitOptions {
    static let names: Set<String> = ["--max-input-size", "--max-depth", "--max-purchases", "--max-decompressed-size"]

    static func limits(_ arguments: Arguments) throws(CommandFailure) -> VerificationLimits {
        var limits = VerificationLimits()
        func value(_ name: String) throws(CommandFailure) -> Int? {
            guard let text = try arguments.single(name) else { return nil }
            guard let number = Int(text), number > 0 else { throw .usage("\(name) must be a positive whole number") }
            return number
        }
        limits.maximumInputSize = try value("--max-input-size") ?? limits.maximumInputSize
        limits.maximumDepth = try value("--max-depth") ?? limits.maximumDepth
        limits.maximumPurchases = try value("--max-purchases") ?? limits.maximumPurchases
        limits.maximumDecompressedSize = try value("--max-decompressed-size") ?? limits.maximumDecompressedSize
        return limits
    }
}
