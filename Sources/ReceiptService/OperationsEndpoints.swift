import HTTPServer
import ReceiptLedger
import StrictJSON

/// `GET /healthz` and `GET /metrics`: what a load balancer and a monitoring system ask. Both are open to anyone,
/// so neither says anything about what the ledger holds beyond its size, and neither scans it.
extension ReceiptService {
    /// 200 `{"status":"ok","ledger_transactions":N}` while the ledger can take writes; 503 with the reason (which
    /// names nothing stored) when it cannot: read-only, closed, or its last write failed.
    func health() throws(ServiceError) -> HTTPResponse {
        do throws(LedgerError) {
            try ledger.checkWritable()
            let count = try ledger.count()
            return .json(JSONObject(["status": .string("ok"), "ledger_transactions": .integer(count)]))
        } catch {
            throw ServiceError(
                status: 503, code: "ledger_unavailable", message: "the ledger cannot take writes: \(error.publicDetail)"
            )
        }
    }

    /// Prometheus text: requests and latency by route, verifications by outcome, the ledger's size.
    func metricsText() -> HTTPResponse {
        HTTPResponse(
            status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")],
            body: Array(metrics.prometheusText(ledgerTransactions: try? ledger.count()).utf8))
    }
}
