// Command ceiling is the benchmark's upper bound: a plain net/http server
// that reads the body and answers 200, nothing else.
package main

import (
	"flag"
	"io"
	"log"
	"net/http"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8091", "listen address")
	flag.Parse()
	log.Fatal(http.ListenAndServe(*addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	})))
}
