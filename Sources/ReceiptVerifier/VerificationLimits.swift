/// Hard bounds on the work one receipt may cause. Each is checked before the work it bounds is done.
public struct VerificationLimits: Hashable, Sendable {
    /// Largest input accepted, in bytes (DER or base64 text). Real receipts with hundreds of purchases are under
    /// 200 KiB.
    public var maximumInputSize: Int
    /// Deepest BER/DER nesting accepted in the envelope.
    public var maximumDepth: Int
    /// Most in-app purchases accepted in one receipt.
    public var maximumPurchases: Int
    /// Largest payload a compressed receipt may inflate to, in bytes.
    public var maximumDecompressedSize: Int
    /// Largest ratio of inflated to compressed size (receipts compress about 10:1; zlib bombs, about 1000:1).
    public var maximumCompressionRatio: Int

    public init(
        maximumInputSize: Int = 4 << 20,
        maximumDepth: Int = 32,
        maximumPurchases: Int = 10_000,
        maximumDecompressedSize: Int = 16 << 20,
        maximumCompressionRatio: Int = 100
    ) {
        self.maximumInputSize = maximumInputSize
        self.maximumDepth = maximumDepth
        self.maximumPurchases = maximumPurchases
        self.maximumDecompressedSize = maximumDecompressedSize
        self.maximumCompressionRatio = maximumCompressionRatio
    }
}
