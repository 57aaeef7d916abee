// A capture as given (a url, a text or a file) checked and made into its new row: one of the
// three, each within its limits; a file decoded, measured and hashed before anything is stored.
import { createHash, webcrypto } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { EntityManager } from 'typeorm';
import { AppError, validationError } from '../../lib/errors';
import { ClassifiedBy, TagSource, VaultItem, VaultItemKind, VaultItemState, vaultBlobKey } from './entities/vault-item';
import { chars, checkCategory, checkTitle, normaliseTags } from './item-fields';
import { excerptOf } from './item-rows';
import type { VaultLimits } from './limits';
import { parseHttpUrl, URL_PATTERN, urlKey } from './url-key';

export interface CaptureInput {
  url?: string | null;
  text?: string | null;
  title?: string | null;
  file?: { name: string; mediaType?: string | null; contentBase64: string } | null;
  tags?: string[] | null;
  category?: string | null;
  favorite?: boolean | null;
  /** When it was captured elsewhere (an import); not in the future. */
  capturedAt?: Date | null;
}

const URL_SHAPE = new RegExp(URL_PATTERN, 'u');
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** How far ahead of this clock a given capture time may be (another host's clock). */
const CLOCK_SKEW_MS = 5 * 60 * 1000;

/** Checks a capture and prepares its row (files: decoded and hashed; the caller stores the bytes). */
export async function captureRow(
  m: EntityManager,
  ownerId: string,
  input: CaptureInput,
  limits: Pick<VaultLimits, 'maxFileBytes' | 'textMaxChars'>,
): Promise<{ item: VaultItem; bytes?: Buffer }> {
  const given = [input.file ? 'file' : null, input.text != null ? 'text' : null].filter(Boolean);
  if (given.length > 1) throw validationError({ body: ['give one of url, text or file'] });
  if (!given.length && input.url == null) throw validationError({ body: ['give one of url, text or file'] });
  if (input.file && input.url != null) throw validationError({ url: ['a file takes no url'] });
  const now = new Date();
  const captured = input.capturedAt ?? null;
  // An import's date (a bookmark's ADD_DATE): a real past moment, never ahead of the clock.
  if (captured && !(captured.getTime() >= 0 && captured.getTime() <= now.getTime() + CLOCK_SKEW_MS))
    throw validationError({ captured_at: ['must be a date from 1970 to now'] });
  const item = m.create(VaultItem, {
    id: uuidv7(),
    ownerId,
    url: null,
    urlKey: null,
    title: null,
    text: null,
    excerpt: null,
    description: null,
    language: null,
    siteName: null,
    mediaType: null,
    sizeBytes: null,
    sha256: null,
    fileName: null,
    blobKey: null,
    state: VaultItemState.PENDING,
    error: null,
    category: null,
    tags: [],
    classifiedBy: null,
    classifiedRuleId: null,
    classifiedConfidence: null,
    favorite: input.favorite ?? false,
    archived: false,
    version: 1,
    capturedAt: captured ?? now,
    updatedAt: now,
    attempts: 0,
    workerId: null,
    leaseUntil: null,
    trainPending: false,
    trainedCategory: null,
    sourceHubId: null,
    sourceNodeId: null,
  });
  if (input.title != null) {
    const title = input.title.trim();
    checkTitle(title);
    item.title = title || null;
  }
  if (input.url != null) {
    if (chars(input.url) > 2048 || !URL_SHAPE.test(input.url))
      throw validationError({ url: ['must be an http or https URL of at most 2048 characters'] });
    const url = parseHttpUrl(input.url);
    // One that does not parse is kept as given (enrichment fails it with `invalid_url`).
    item.url = url ? url.href.slice(0, 2048) : input.url;
    item.urlKey = url ? urlKey(url) : createHash('sha256').update(input.url).digest('hex');
  }
  const category = checkCategory(input.category);
  if (category) {
    item.category = category;
    item.classifiedBy = ClassifiedBy.USER;
    item.trainPending = true;
  }
  if (input.tags) item.tags = normaliseTags(input.tags).map((name) => ({ name, source: TagSource.USER }));
  let bytes: Buffer | undefined;
  if (input.file) {
    item.kind = VaultItemKind.FILE;
    const name = input.file.name?.trim() ?? '';
    if (!name || chars(name) > 255) throw validationError({ 'file.name': ['must be 1 to 255 characters'] });
    const claimed = input.file.mediaType?.trim().toLowerCase() || null;
    if (claimed && (claimed.length > 255 || !/^[\w.+-]+\/[\w.+-]+$/.test(claimed)))
      throw validationError({ 'file.media_type': ['must be a media type such as application/pdf'] });
    const base64 = input.file.contentBase64 ?? '';
    // 4 characters hold 3 bytes: the decoded size is known before decoding.
    if (base64.length % 4 !== 0 || !BASE64.test(base64))
      throw validationError({ 'file.content_base64': ['must be base64 (RFC 4648, with padding)'] });
    const size = (base64.length / 4) * 3 - (base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0);
    if (size > limits.maxFileBytes)
      throw new AppError('payload_too_large', `A file holds at most ${limits.maxFileBytes} bytes.`, {
        limit: 'VAULT_MAX_FILE_BYTES',
        max: limits.maxFileBytes,
      });
    if (size === 0) throw validationError({ 'file.content_base64': ['the file is empty'] });
    bytes = Buffer.from(base64, 'base64');
    item.fileName = name;
    item.mediaType = claimed;
    item.sizeBytes = bytes.length;
    // Hashed off the event loop (WebCrypto runs digests in the thread pool).
    item.sha256 = Buffer.from(await webcrypto.subtle.digest('SHA-256', bytes)).toString('hex');
    item.blobKey = vaultBlobKey(item.id);
  } else if (input.text != null) {
    item.kind = VaultItemKind.TEXT;
    if (input.text.length > limits.textMaxChars)
      throw validationError({ text: [`at most ${limits.textMaxChars} characters`] });
    const text = input.text.trim();
    if (!text) throw validationError({ text: ['must not be empty'] });
    item.text = text;
    item.excerpt = excerptOf(text);
    item.title ??= [...(text.split('\n', 1)[0] ?? '')].slice(0, 200).join('').trim() || null;
  } else {
    item.kind = VaultItemKind.LINK;
    item.title ??= null;
  }
  return { item, bytes };
}
