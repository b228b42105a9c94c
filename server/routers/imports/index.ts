// What other resources may use of imports: nothing yet. Their files import imports only through here.
export {};
