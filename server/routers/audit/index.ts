// What other resources may use of audit. Their files import audit only through here.
export {};
