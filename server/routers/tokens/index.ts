// What other resources may use of tokens: nothing yet. Their files import tokens only through here.
export {};
