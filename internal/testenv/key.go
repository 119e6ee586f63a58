package testenv

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"sync"
)

var (
	keyOnce sync.Once
	keyPEM  []byte
)

// AppKeyPEM returns a GitHub App private key (PEM, RSA 2048) for tests,
// made once per test binary: key generation is slow.
func AppKeyPEM(t T) []byte {
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		keyPEM = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	})
	return keyPEM
}
