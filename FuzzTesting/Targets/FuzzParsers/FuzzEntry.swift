import FuzzChecks

/// libFuzzer's entry point: runs the FuzzParsers check and stops the fuzzer on a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    if let finding = FuzzChecks.targets["FuzzParsers"]?(Array(UnsafeBufferPointer(start: data, count: size))) {
        fatalError("FuzzParsers: \(finding)")
    }
    return 0
}
