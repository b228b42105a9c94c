import { createContext, useContext } from "react";

/** The response's CSP nonce on the server; "" in the browser (which hides nonces from the DOM). */
export const NonceContext = createContext("");
export const useNonce = () => useContext(NonceContext);
