import nodemailer, { type Transporter } from 'nodemailer';
import type { Infra } from '../../../shared/infra.js';
import type { Component } from '../role.js';
import { createCreditNotePdfPool, createInvoicePdfPool } from '../../workers/pool.js';
import { invoiceDocument } from '../../domain/documents/invoice.js';
import { creditNoteDocument } from '../../domain/documents/credit-note.js';
import { getInvoice } from '../../domain/invoices/store.js';
import { nextAttemptAt, RETRY_DELAYS_MS } from '../../domain/webhooks/retry-schedule.js';
import { claimDueEmails, markEmailSent, recordEmailFailure, type ClaimedEmail } from '../../domain/emails/store.js';
import { composeEmail, emailMessageId, type EmailDocument } from '../../domain/emails/message.js';
import { hostedEmailLinks, type EmailLinks } from '../../domain/emails/links.js';
import { LOGO_CID } from '../../domain/emails/html.js';
import { sellerProfile, type SellerProfile } from '../../domain/seller/profile.js';
import { DeliveryPump } from './delivery-pump.js';

export interface MailDeliveryOptions {
  /** When emails are due (tests move it forward instead of waiting minutes). Leases use real time. */
  clock: () => Date;
  /** The webhook schedule (docs/design.md §9): 1 min, 5 min, … 24 h; after the ninth attempt the email is `failed`. */
  retryDelaysMs: readonly number[];
  /** SMTP connection, greeting and socket timeouts. */
  timeoutMs: number;
  /** Claimed emails belong to this process this long (real time); must exceed rendering and sending one batch. */
  leaseMs: number;
  pollIntervalMs: number;
  /** Emails claimed, rendered and sent at once. */
  claimBatch: number;
  /** The hosted pages' links an email carries (../../domain/emails/links.ts). */
  links?: EmailLinks;
}

export const DEFAULT_MAIL_OPTIONS: MailDeliveryOptions = {
  clock: () => new Date(),
  retryDelaysMs: RETRY_DELAYS_MS,
  timeoutMs: 30_000,
  leaseMs: 5 * 60_000,
  pollIntervalMs: 1_000,
  claimBatch: 8,
};

/** A row whose mark failed is retried this often before the lease decides (it may then be sent again). */
const MARK_TRIES = 5;

/**
 * Sends invoice emails (dispatcher role, docs/emails.md) through SMTP_URL: claims due rows of invoice_emails, renders
 * the document's PDF (the download routes' renderer, in piscina workers), sends it with a Message-ID that is the
 * same on every attempt, and marks the row sent right after the SMTP server accepted it — one row, one statement,
 * so the window in which a crash makes a second copy go out is that single UPDATE. A refused or unreachable server
 * is an attempt that failed: the next one follows the webhook retry schedule.
 */
export class MailDelivery implements Component {
  readonly name = 'mail-delivery';
  private readonly opts: MailDeliveryOptions & { links: EmailLinks };
  private transport: Transporter | undefined;
  private invoicePdfs: ReturnType<typeof createInvoicePdfPool> | undefined;
  private notePdfs: ReturnType<typeof createCreditNotePdfPool> | undefined;
  private readonly pump: DeliveryPump;
  private readonly sent;

  constructor(
    private readonly infra: Infra,
    opts: Partial<MailDeliveryOptions> = {},
  ) {
    // By default the emails carry the hosted pages' links, minted with the deployment's secret.
    const links = opts.links ?? hostedEmailLinks(infra.pg, infra.config, opts.clock ?? DEFAULT_MAIL_OPTIONS.clock);
    this.opts = { ...DEFAULT_MAIL_OPTIONS, ...opts, links };
    this.pump = new DeliveryPump({
      name: 'mail delivery',
      failure: 'claiming due emails failed',
      pollIntervalMs: this.opts.pollIntervalMs,
      log: infra.log,
      pass: () => this.pass(),
    });
    this.sent = infra.metrics.counter(
      'meterline_invoice_emails_total',
      'Invoice email attempts by outcome: sent (the SMTP server accepted it), failed (refused or unreachable; retried on the webhook schedule), gave_up (the last attempt failed)',
      ['outcome'],
    );
  }

  async start(): Promise<void> {
    const t = this.opts.timeoutMs;
    this.transport = nodemailer.createTransport({
      url: this.infra.config.SMTP_URL,
      connectionTimeout: t,
      greetingTimeout: t,
      socketTimeout: t,
    } as nodemailer.TransportOptions);
    this.pump.start();
  }

  async stop(): Promise<void> {
    if (!(await this.pump.stop())) return;
    await Promise.all([this.invoicePdfs?.destroy(), this.notePdfs?.destroy()]);
    this.transport?.close();
  }

  async health(): Promise<{ ok: boolean; detail?: string }> {
    return this.pump.health();
  }

  /** Claims and sends what is due, unless a pass is running (then one more pass follows it). */
  wake(): void {
    this.pump.wake();
  }

  /** One pass of the pump (./delivery-pump.ts): claim due emails and send them, batch after batch. */
  private async pass(): Promise<void> {
    while (!this.pump.isStopped) {
      const claimed = await claimDueEmails(this.infra.pg, this.opts.clock(), this.opts.claimBatch, this.opts.leaseMs);
      this.pump.clear();
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((m) => this.deliver(m)));
      if (claimed.length < this.opts.claimBatch) return;
    }
  }

  private async deliver(m: ClaimedEmail): Promise<void> {
    try {
      const seller = await sellerProfile(this.infra, m.account_id);
      const { document, pdf } = await this.render(m, seller);
      const mail = composeEmail(document);
      const logo = seller.logo
        ? [
            {
              cid: LOGO_CID,
              filename: `logo.${seller.logo.media_type === 'image/png' ? 'png' : 'jpg'}`,
              content: Buffer.from(seller.logo.data),
              contentType: seller.logo.media_type,
              contentDisposition: 'inline' as const,
            },
          ]
        : [];
      await this.transport!.sendMail({
        from: seller.from,
        ...(seller.support_email ? { replyTo: seller.support_email } : {}),
        to: m.recipient,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId: emailMessageId(m.event_id, m.recipient, seller.from.address),
        attachments: [{ filename: mail.filename, content: Buffer.from(pdf), contentType: 'application/pdf' }, ...logo],
      });
    } catch (err) {
      await this.failed(m, err as Error);
      return;
    }
    this.sent.inc({ outcome: 'sent' });
    await this.mark(m);
  }

  /** The email's document and its PDF, rendered as the download routes render it. */
  private async render(m: ClaimedEmail, profile: SellerProfile): Promise<{ document: EmailDocument; pdf: Uint8Array }> {
    const seller = { name: profile.name, support_email: profile.support_email, logo: profile.logo !== null };
    const { invoice } = await getInvoice(this.infra.pg, m.account_id, m.invoice_id);
    const links = {
      invoice: await this.opts.links.hostedInvoiceUrl(invoice),
      update_payment_method: m.kind === 'payment_failed' ? await this.opts.links.updatePaymentMethodUrl(invoice) : null,
    };
    const common = { kind: m.kind, seller, links, test: m.test };
    if (m.kind === 'credit_note') {
      const task = await creditNoteDocument(this.infra, m.account_id, m.credit_note_id!);
      this.notePdfs ??= createCreditNotePdfPool({ maxThreads: 1 });
      return {
        // A credited invoice was finalized, so it has its number.
        document: {
          ...common,
          invoice: { ...invoice, number: invoice.number ?? invoice.id },
          note: task.note,
          locale: task.locale,
        },
        pdf: await this.notePdfs.run(task),
      };
    }
    const task = await invoiceDocument(this.infra, m.account_id, m.invoice_id);
    this.invoicePdfs ??= createInvoicePdfPool({ maxThreads: 1 });
    return {
      document: {
        ...common,
        invoice: { ...task.invoice, number: task.invoice.number ?? '' },
        failure: m.kind === 'payment_failed' ? invoice.last_payment_error : null,
        locale: task.locale,
      },
      pdf: await this.invoicePdfs.run(task),
    };
  }

  private async failed(m: ClaimedEmail, err: Error): Promise<void> {
    const retryAt = nextAttemptAt(m.attempts + 1, this.opts.clock(), this.opts.retryDelaysMs);
    this.sent.inc({ outcome: retryAt ? 'failed' : 'gave_up' });
    this.infra.log.warn(
      { email: m.id, event: m.event_id, kind: m.kind, attempt: m.attempts + 1, err: err.message },
      retryAt ? 'invoice email not sent; retrying later' : 'invoice email not sent; no attempt left',
    );
    // Not recorded (Postgres down): the lease runs out and the email is claimed again.
    await recordEmailFailure(this.infra.pg, m.id, err.message, retryAt).catch((e) =>
      this.infra.log.warn({ err: e, email: m.id }, 'mail delivery: recording a failed attempt failed'),
    );
  }

  /**
   * Sent: mark it now (a few tries over a few seconds). Should every try fail, the lease runs out and the email
   * goes out again with the same Message-ID: the one way a customer gets it twice (docs/emails.md).
   */
  private async mark(m: ClaimedEmail): Promise<void> {
    for (let i = 1; ; i++) {
      try {
        await markEmailSent(this.infra.pg, m.id);
        return;
      } catch (err) {
        if (i >= MARK_TRIES || this.pump.isStopped) {
          this.pump.report(`marking an email sent failed: ${(err as Error).message}`);
          this.infra.log.error({ err, email: m.id }, 'mail delivery: sent but not marked; it may be sent again');
          return;
        }
        await new Promise((r) => setTimeout(r, 200 * 2 ** i));
      }
    }
  }
}
