#!/usr/bin/env bash
# Regenerates the committed seed corpora in FuzzTesting/Corpus/ from real receipts in the test vectors and from
# receipts the built `receipt` tool signs with the committed development chains (run `swift build` first).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
receipt="$root/.build/debug/receipt"
real="$root/Tests/ReceiptVerifierTests/Vectors/real"
corpus="$root/FuzzTesting/Corpus"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# Only the corpora generated here are replaced; the others (FuzzLegacy, FuzzJWS) are copies of test vectors kept
# by hand.
for target in FuzzDER FuzzPayload FuzzVerify FuzzParsers FuzzSigningRequest FuzzCatalog FuzzBase64; do
    rm -rf "${corpus:?}/$target" && mkdir -p "$corpus/$target"
done

# Signing requests: small, complete, with _ms dates and offsets, bound to a device.
cat > "$corpus/FuzzSigningRequest/minimal.json" <<'JSON'
{"bundle_id": "com.example.game", "receipt_creation_date": "2024-06-05T12:00:00Z"}
JSON
cat > "$corpus/FuzzSigningRequest/full.json" <<'JSON'
{"bundle_id": "com.example.game", "application_version": "42", "original_application_version": "1.0",
 "receipt_type": "Production", "app_item_id": 1234567890, "version_external_identifier": "8123456",
 "receipt_creation_date": "2024-06-05T12:00:00.250+02:00", "original_purchase_date_ms": 1672560000000,
 "expiration_date": "2025-06-05 12:00:00 Etc/GMT", "device_id": "6c:40:08:b5:94:5e",
 "in_app": [
  {"product_id": "com.example.pro.monthly", "transaction_id": "2000000000000002", "original_transaction_id": "2000000000000001",
   "purchase_date": "2024-06-01T09:00:00Z", "purchase_date_ms": "1717232400000", "original_purchase_date": "2024-05-01T09:00:00Z",
   "expires_date_ms": 1719824400000, "web_order_line_item_id": "2000000123357229", "is_trial_period": false,
   "is_in_intro_offer_period": "true", "promotional_offer_id": "summer", "cancellation_date": null},
  {"product_id": "com.example.coins100", "transaction_id": "2000000000000003", "purchase_date": "2024-06-04T18:30:00Z",
   "quantity": 3, "cancellation_date": "2024-06-05T08:00:00Z"}]}
JSON

# Catalogs: the README's, and one of each product type alone.
cat > "$corpus/FuzzCatalog/readme.json" <<'JSON'
{"products": [
  {"id": "com.example.removeads", "type": "non_consumable", "entitlements": ["no_ads"]},
  {"id": "com.example.pro.monthly", "type": "auto_renewable", "entitlements": ["pro"], "group": "main", "rank": 2},
  {"id": "com.example.premium.yearly", "type": "auto_renewable", "entitlements": ["pro", "premium"], "group": "main", "rank": 1},
  {"id": "com.example.season", "type": "non_renewing", "entitlements": ["season"], "duration": "P30D"},
  {"id": "com.example.coins100", "type": "consumable", "entitlements": ["coins"], "amount": 100}],
 "grace_period": "P16D"}
JSON
echo '{"products": [{"id": "a", "type": "non_renewing", "entitlements": ["x"], "duration": "P1Y2M3W4DT5H6M7S"}]}' \
    > "$corpus/FuzzCatalog/duration.json"

# Our receipts: RSA and EC, plain and compressed, signed from the requests above.
for algorithm in rsa ec; do
    chain="$root/certs/dev-$algorithm"
    sign=("$receipt" sign --key "$chain/receipt-signer.key" --cert "$chain/receipt-signer.pem" --chain "$chain/intermediate-ca.pem")
    "${sign[@]}" "$corpus/FuzzSigningRequest/full.json" -o "$corpus/FuzzVerify/ours-$algorithm.der"
    "${sign[@]}" "$corpus/FuzzSigningRequest/minimal.json" -o "$corpus/FuzzVerify/ours-$algorithm-minimal.der"
    "${sign[@]}" "$corpus/FuzzSigningRequest/full.json" -o "$corpus/FuzzVerify/ours-$algorithm-compressed.der" --compress
    "${sign[@]}" "$corpus/FuzzSigningRequest/full.json" --base64 -o "$corpus/FuzzBase64/ours-$algorithm.b64"
    openssl cms -verify -noverify -binary -inform DER -in "$corpus/FuzzVerify/ours-$algorithm.der" \
        -out "$corpus/FuzzPayload/ours-$algorithm.payload" 2>/dev/null
    # OpenSSL's own envelope (with signed attributes, and streamed BER) around our payload.
    openssl cms -sign -binary -nodetach -outform DER -md sha256 -in "$corpus/FuzzPayload/ours-$algorithm.payload" \
        -signer "$chain/receipt-signer.pem" -inkey "$chain/receipt-signer.key" -certfile "$chain/intermediate-ca.pem" \
        -out "$corpus/FuzzVerify/openssl-attributes-$algorithm.der"
    openssl cms -sign -binary -nodetach -outform DER -stream -in "$corpus/FuzzPayload/ours-$algorithm.payload" \
        -signer "$chain/receipt-signer.pem" -inkey "$chain/receipt-signer.key" -certfile "$chain/intermediate-ca.pem" \
        -out "$corpus/FuzzVerify/openssl-ber-$algorithm.der"
done

# Real receipts: the small ones whole, all of them for the payload and DER readers.
for file in tpinappreceipt/receipt-xcode.der tpinappreceipt/receipt-xcode-with-purchases.der \
    appreceiptvalidator/hannes_mac_mindnode_receipt.der tpinappreceipt/receipt-watch.der \
    tpinappreceipt/receipt-sandbox-g5.der appreceiptvalidator/mindnode_mac_sha256_receipt.der; do
    cp "$real/$file" "$corpus/FuzzVerify/real-$(basename "$file")"
done
for file in "$real"/*/*.der; do
    name="$(basename "$file" .der)"
    openssl cms -verify -noverify -binary -inform DER -in "$file" -out "$corpus/FuzzPayload/real-$name.payload" 2>/dev/null || true
done
cp "$real/tpinappreceipt/receipt-xcode.b64" "$real/cargobay/legacy-nonconsumable.b64" "$corpus/FuzzBase64/"
cp "$real/tpinappreceipt/receipt-xcode.der" "$real/apple-pki/AppleIncRootCertificate.cer" "$corpus/FuzzDER/"
cp "$corpus/FuzzVerify/openssl-ber-ec.der" "$corpus/FuzzVerify/ours-ec-compressed.der" "$corpus/FuzzDER/"
cp "$corpus"/FuzzVerify/* "$corpus/FuzzParsers/"
find "$corpus" -type f -size +100k -delete
echo "corpus: $(find "$corpus" -type f | wc -l) files, $(du -sh "$corpus" | cut -f1)"
