/// Runs an OpenSSL `d2i_…` decoder over `bytes` and returns what it built only when it consumed every byte;
/// otherwise frees any partial result and returns nil. Clears earlier errors first so failures report their own.
func decodeWhole(
    _ bytes: [UInt8],
    with decode: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> OpaquePointer?,
    free: (OpaquePointer) -> Void
) -> OpaquePointer? {
    clearOpenSSLErrors()
    return bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
        var cursor = buffer.baseAddress
        guard let decoded = decode(&cursor, buffer.count) else { return nil }
        guard let cursor, let base = buffer.baseAddress, cursor - base == buffer.count else {
            free(decoded)
            return nil
        }
        return decoded
    }
}
