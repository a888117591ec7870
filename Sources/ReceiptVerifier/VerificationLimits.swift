/// Hard bounds on the work one receipt may cause. Each is checked before the work it bounds is done.
public struct VerificationLimits: Hashable, Sendable {
    /// Largest input accepted, in bytes (DER or base64 text). Real receipts with hundreds of purchases are under
    /// 200 KiB.
    public var maximumInputSize: Int
    /// Deepest BER/DER nesting accepted in the envelope.
    public var maximumDepth: Int
    /// Most in-app purchases accepted in one receipt.
    public var maximumPurchases: Int

    public init(maximumInputSize: Int = 4 << 20, maximumDepth: Int = 32, maximumPurchases: Int = 10_000) {
        self.maximumInputSize = maximumInputSize
        self.maximumDepth = maximumDepth
        self.maximumPurchases = maximumPurchases
    }
}
