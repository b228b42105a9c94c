// What other resources may use of linktrees: nothing yet. Their files import linktrees only through here.
export {};
