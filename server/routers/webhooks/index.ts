// What other resources may use of webhooks. Their files import webhooks only through here.
export {};
